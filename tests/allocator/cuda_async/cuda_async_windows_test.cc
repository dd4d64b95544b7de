// Limit windows of the cuda_async policy (allocator/cuda_async/cuda_async_windows.cc):
// random programs with several streams and queued frees, run at one limit
// while the window is tracked. At points along the way the run is cloned at
// other limits of its window; each clone, carried on, must give what a fresh
// run at its limit gives for the whole program: the same results before the
// point (so the window held every decision) and after it (so CloneAt is that
// run's state).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"
#include "tests/allocator/cuda_async/cuda_async_test_util.h"

namespace hbmsim::testing {
namespace {

// Applies ops one at a time, keeping the buffers' handles; one line per
// alloc: where it went, or that it failed, and how (oom or fragmentation) from
// op `kinds_from` on. The kind compares the request with free bytes the limit
// sizes, so before a clone's point it is its original run's.
struct Driver {
  Allocator* a = nullptr;
  std::map<uint64_t, Handle> handles;
  std::string digest;
  size_t kinds_from = SIZE_MAX;

  void Apply(const std::vector<Op>& ops, size_t i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kAlloc) {
      const AllocResult r = a->Allocate(RequestOf(op, i));
      const std::string_view status = r.ok() || i >= kinds_from ? AllocStatusName(r.status) : "failed";
      digest += fmt::format("{} {} {}\n", i, status, r.has_offset ? r.offset.value() : ~uint64_t{0});
      if (r.ok()) handles[op.id] = r.handle;
      return;
    }
    ApplyRelease(*a, op, handles);
  }
  std::string Finish() const {
    const AllocatorStats s = a->GetStats();
    return digest + fmt::format("stats {} {} {} {} {} {} {} {}\n", s.num_allocs, s.bytes_in_use, s.peak_bytes_in_use,
                                s.largest_alloc_size, s.largest_free_block_bytes, s.pool_bytes.value_or(-1),
                                s.peak_pool_bytes.value_or(-1), s.bytes_limit.value_or(-1));
  }
};

std::string FreshRun(const std::vector<Op>& ops, const CudaAsyncOptions& options, size_t kinds_from) {
  CudaAsyncAllocator a(options);
  Driver d{&a, {}, {}, kinds_from};
  for (size_t i = 0; i < ops.size(); ++i) d.Apply(ops, i);
  return d.Finish();
}

TEST(CudaAsyncWindowsTest, ACloneAnywhereInTheWindowIsTheRunAtItsLimit) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  int clones = 0, clones_under_a_cap = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ProgramShape shape;
    shape.num_ops = 1200;
    shape.max_bytes = uint64_t{24} << 20;
    shape.num_streams = 1 + static_cast<int>(seed % 3);
    shape.queued_free_fraction = 0.4;
    const std::vector<Op> ops = GenerateProgram(seed, shape);
    // A limit the program presses against (remaps, failures), and one past the cap.
    for (const uint64_t limit : {160 * kMiB + 12345, uint64_t{1} << 62}) {
      CudaAsyncAllocator run(SeededPool(limit, seed));
      ASSERT_TRUE(run.TrackLimitWindow());
      Driver d{&run, {}, {}};
      for (size_t i = 0; i < ops.size(); ++i) {
        d.Apply(ops, i);
        if (i % 97 != 0) continue;
        const LimitWindow w = run.limit_window();
        ASSERT_TRUE(w.Contains(Bytes(limit))) << i;
        std::vector<uint64_t> others = {w.lo.value(), w.lo.value() + 3 * kMiB + 77, limit - 2 * kMiB - 1};
        if (w.hi != Bytes::Max()) others.push_back(w.hi.value());
        for (const uint64_t other : others) {
          if (other == limit || !w.Contains(Bytes(other))) continue;
          std::unique_ptr<Allocator> clone = run.CloneAt(Bytes(other));
          ASSERT_TRUE(clone->CheckInvariants().ok()) << clone->CheckInvariants().message();
          Driver c{clone.get(), d.handles, d.digest, i + 1};
          for (size_t j = i + 1; j < ops.size(); ++j) c.Apply(ops, j);
          const std::string where = fmt::format("seed {} limit {} op {} clone at {}", seed, limit, i, other);
          ASSERT_EQ(c.Finish(), FreshRun(ops, SeededPool(other, seed), i + 1)) << where;
          ++clones;
          if (w.hi != Bytes::Max()) ++clones_under_a_cap;  // the limit had refused something
        }
      }
    }
  }
  // Worth something only if many clones were made, some in a window the
  // limit had bounded from above.
  EXPECT_GT(clones, 100);
  EXPECT_GT(clones_under_a_cap, 5);
}

// A remap unmaps limit-dependent granules: from there the window is one P.
TEST(CudaAsyncWindowsTest, ARemapLeavesTheLimitsOfOneGranuleCount) {
  CudaAsyncOptions o;
  o.memory_limit = Bytes(uint64_t{9} << 20);  // P = 4 granules of 2 MiB
  o.va_range = uint64_t{4} << 20;
  CudaAsyncAllocator a(o);
  ASSERT_TRUE(a.TrackLimitWindow());
  EXPECT_EQ(a.limit_window(), (LimitWindow{}));
  const auto alloc = [&](uint64_t mib) {
    AllocRequest r;
    r.bytes = Bytes(mib << 20);
    return a.Allocate(r);
  };
  // 3 MiB: a new 4 MiB range, 2 granules mapped: P >= 1 (fits at all), P >= 2.
  const AllocResult x = alloc(3);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes(uint64_t{4} << 20), Bytes::Max()}));
  // 4 MiB more: nothing free holds it; a new range maps 2 more: P >= 4.
  ASSERT_TRUE(alloc(4).ok());
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes(uint64_t{8} << 20), Bytes::Max()}));
  // Free the 3 MiB (its 2 granules stay mapped, cached). 5 MiB: no free block
  // holds it; a new range maps 3 granules over the 4 mapped only if P >= 7;
  // a remap, giving back the 2 cached, only if P >= |H| + 3 = 5: it fails,
  // and so it would under every limit of [8 MiB, 10 MiB).
  a.Free(x.handle);
  EXPECT_FALSE(alloc(5).ok());
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes(uint64_t{8} << 20), Bytes(uint64_t{10} << 20) - Bytes(1)}));
  // 3 MiB: the free 4 MiB block is mapped: reused, no limit involved.
  ASSERT_TRUE(alloc(3).ok());
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes(uint64_t{8} << 20), Bytes(uint64_t{10} << 20) - Bytes(1)}));
}

}  // namespace
}  // namespace hbmsim::testing
