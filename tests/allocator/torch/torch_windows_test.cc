// Limit windows of the PyTorch model with expandable segments
// (allocator/torch/torch_windows.cc): the capacity sizes every VA range, so
// the tails' lengths and the ranges' bases. Random programs on several
// streams, small and large, with empty_cache() calls (holes unmapped in the
// middle of ranges), run at one limit while the window is tracked. At points
// along the way the run is cloned at other limits of its window; each clone,
// carried on, must give what a fresh run at its limit gives: the same
// verdicts before the point (so the window held every decision), the same
// placements, stats and memory map after it (so CloneAt laid the ranges out
// as that run did).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/common/random_ops.h"
#include "tests/common/sanitized_build.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch::testing {
namespace {

using hbmsim::testing::ApplyRelease;
using hbmsim::testing::GenerateProgram;
using hbmsim::testing::Op;
using hbmsim::testing::OpKind;
using hbmsim::testing::ProgramShape;
using hbmsim::testing::RequestOf;

// empty_cache() before every this many ops: holes unmapped mid-range, which
// push later mappings towards the tails.
constexpr size_t kEmptyCacheEvery = 41;

TorchOptions Expandable(uint64_t capacity) {
  TorchOptions o;
  o.capacity = Bytes(capacity);
  o.expandable_segments = true;
  return o;
}

// Applies ops one at a time, keeping the buffers' handles; one line per
// alloc: before op `exact_from` only whether it fit (a run at another limit
// of the window lays its ranges out elsewhere), from there where it went or
// how it failed.
struct Driver {
  TorchAllocator* a = nullptr;
  std::map<uint64_t, Handle> handles;
  std::string digest;
  size_t exact_from = 0;

  void Apply(const std::vector<Op>& ops, size_t i) {
    const Op& op = ops[i];
    if (i % kEmptyCacheEvery == kEmptyCacheEvery - 1) a->EmptyCache();
    if (op.kind == OpKind::kAlloc) {
      const AllocResult r = a->Allocate(RequestOf(op, i));
      if (i < exact_from) {
        digest += fmt::format("{} {}\n", i, r.ok() ? "ok" : "failed");
      } else {
        digest += fmt::format("{} {} {} {}\n", i, AllocStatusName(r.status),
                              r.has_offset ? r.offset.value() : ~uint64_t{0}, r.size.value());
      }
      if (r.ok()) handles[op.id] = r.handle;
      return;
    }
    ApplyRelease(*a, op, handles);
  }
  std::string Finish() const {
    const AllocatorStats s = a->GetStats();
    return digest + fmt::format("stats {} {} {} {} {} {} {}\n", s.num_allocs, s.bytes_in_use, s.peak_bytes_in_use,
                                s.largest_alloc_size, s.largest_free_block_bytes, s.pool_bytes.value_or(-1),
                                s.peak_pool_bytes.value_or(-1)) +
           Map(*a);
  }
};

// The first line where two digests differ, or "" when they are equal.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t from = 0;
  while (true) {
    const size_t ea = a.find('\n', from), eb = b.find('\n', from);
    const std::string la = a.substr(from, ea == std::string::npos ? std::string::npos : ea - from);
    const std::string lb = b.substr(from, eb == std::string::npos ? std::string::npos : eb - from);
    if (la != lb) return fmt::format("clone: '{}', fresh: '{}'", la, lb);
    if (ea == std::string::npos || eb == std::string::npos || ea != eb) return ea == eb ? "" : "lengths differ";
    from = ea + 1;
  }
}

std::string FreshRun(const std::vector<Op>& ops, uint64_t capacity, size_t exact_from) {
  TorchAllocator a(Expandable(capacity));
  EXPECT_TRUE(a.TrackLimitWindow());
  Driver d{&a, {}, {}, exact_from};
  for (size_t i = 0; i < ops.size(); ++i) d.Apply(ops, i);
  return d.Finish();
}

TEST(TorchWindowsTest, ACloneAnywhereInTheWindowIsTheRunAtItsLimit) {
  int clones = 0, clones_under_a_cap = 0;
  // 1 seed under the sanitizers (tests/common/sanitized_build.h).
  const uint64_t seeds = hbmsim::testing::ForThisBuild<uint64_t>(6, 1);
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    ProgramShape shape;
    shape.num_ops = 2500;
    shape.min_bytes = 512;
    shape.max_bytes = uint64_t{64} << 20;
    shape.num_streams = 1 + static_cast<int>(seed % 3);
    const std::vector<Op> ops = GenerateProgram(seed, shape);
    // Limits the program presses against (releases, failures, tails mapped
    // down to little), and one far past any device (ranges at their largest).
    for (const uint64_t limit : {160 * kMiB + 12345, 400 * kMiB + 4097, uint64_t{1} << 62}) {
      TorchAllocator run(Expandable(limit));
      ASSERT_TRUE(run.TrackLimitWindow());
      Driver d{&run, {}, {}, SIZE_MAX};  // verdicts only: placements are the limit's
      for (size_t i = 0; i < ops.size(); ++i) {
        d.Apply(ops, i);
        if (i % 89 != 0) continue;
        const LimitWindow w = run.limit_window();
        ASSERT_TRUE(w.Contains(Bytes(limit))) << i;
        std::vector<uint64_t> others = {w.lo.value(), w.lo.value() + 3 * kMiB + 77, limit - 2 * kMiB - 1};
        if (w.hi < Bytes(uint64_t{1} << 63)) others.push_back(w.hi.value());
        for (const uint64_t other : others) {
          if (other == limit || !w.Contains(Bytes(other))) continue;
          std::unique_ptr<Allocator> clone = run.CloneAt(Bytes(other));
          ASSERT_TRUE(clone->CheckInvariants().ok()) << clone->CheckInvariants().message();
          // The original's verdicts up to the point, then the clone's placements.
          Driver c{static_cast<TorchAllocator*>(clone.get()), d.handles, d.digest, i + 1};
          for (size_t j = i + 1; j < ops.size(); ++j) c.Apply(ops, j);
          const std::string where = fmt::format("seed {} limit {} op {} clone at {}", seed, limit, i, other);
          ASSERT_EQ(FirstDifference(c.Finish(), FreshRun(ops, other, i + 1)), "") << where;
          ++clones;
          if (w.hi != Bytes::Max() - Bytes(1)) ++clones_under_a_cap;  // the limit had refused something
        }
      }
    }
  }
  // Worth something only if many clones were made, some in a window the
  // limit had bounded from above.
  EXPECT_GT(clones, hbmsim::testing::ForThisBuild(100, 30));
  EXPECT_GT(clones_under_a_cap, hbmsim::testing::ForThisBuild(5, 2));
}

// A tail too short for a request sends it to a new range: the window ends
// below the least capacity whose range would have held it there.
//
//   capacity 100 MiB: ranges of ceil(112.5 / 20) × 20 = 120 MiB
//   A 40, B 40, C 20 mapped; A and C freed, emptied:
//     [ A unmapped 40 | B 40 | tail 40 (C's pages and the rest) ]
//   50 MiB (60 mapped): A's hole lies before B, the tail is 40 < 50: a new
//   range. A range of 140 MiB (a capacity of 111848112 B and up: 9/8 of
//   it over 120 MiB) leaves a tail of 60 MiB, which holds it.
TEST(TorchWindowsTest, ATailTooShortBoundsTheWindowFromAbove) {
  const auto run = [](uint64_t capacity, LimitWindow* window) {
    TorchAllocator a(Expandable(capacity));
    EXPECT_TRUE(a.TrackLimitWindow());
    const AllocResult x = Alloc(a, 40 * kMiB);
    ASSERT_TRUE(Alloc(a, 40 * kMiB).ok());
    const AllocResult z = Alloc(a, 20 * kMiB);
    a.Free(x.handle);
    a.Free(z.handle);
    a.EmptyCache();
    const AllocResult big = Alloc(a, 50 * kMiB);
    ASSERT_TRUE(big.ok());
    *window = a.limit_window();
    // Where it went: a new range at 120 MiB, or the first range's tail.
    EXPECT_EQ(big.offset, Offset(capacity < 111848112 ? 120 * kMiB : 80 * kMiB)) << capacity;
  };
  LimitWindow w;
  run(100 * kMiB, &w);
  // From below: the 100 MiB in use after C (and again after the 50 MiB's 60).
  EXPECT_EQ(w, (LimitWindow{Bytes(100 * kMiB), Bytes(111848111)}));
  run(111848111, &w);
  EXPECT_EQ(w.hi, Bytes(111848111));
  run(111848112, &w);
  EXPECT_EQ(w.lo, Bytes(111848112));
}

}  // namespace
}  // namespace hbmsim::allocator::torch::testing
