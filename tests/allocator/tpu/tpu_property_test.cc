// Random programs in paranoid mode: invariants after every op, identical
// digests for identical inputs, and the reported largest request really fits.
#include <memory>
#include <random>

#include "allocator/tpu/tpu_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

ProgramShape SmallHbmShape() {
  ProgramShape shape;
  shape.num_ops = 1500;
  shape.min_bytes = 1;
  shape.max_bytes = 8 << 20;
  shape.free_probability = 0.45;
  shape.queued_free_fraction = 0.3;
  return shape;
}

TpuOptions Variant(int seed, uint64_t hbm_bytes = 64 * kMiB) {
  TpuOptions o = Options(hbm_bytes);
  o.queued_free_retry = seed % 2 == 0;
  o.defragment = seed % 3 != 1;
  o.evict_programs = seed % 5 != 2;
  o.eviction_order = seed % 2 == 0 ? EvictionOrder::kLru : EvictionOrder::kLargestFirst;
  return o;
}

TEST(TpuPropertyTest, SharedRandomProgramsKeepInvariantsAndAreDeterministic) {
  for (int seed = 1; seed <= 12; ++seed) {
    const std::vector<Op> ops = GenerateProgram(seed, SmallHbmShape());
    TpuAllocator first(Variant(seed, 24 * kMiB));
    TpuAllocator second(Variant(seed, 24 * kMiB));
    const RunOutcome a = RunProgram(first, ops, /*paranoid=*/true);
    const RunOutcome b = RunProgram(second, ops, /*paranoid=*/true);
    ASSERT_TRUE(a.invariants.ok()) << "seed " << seed << ": " << a.invariants.message();
    EXPECT_EQ(a.digest, b.digest) << "seed " << seed;
    EXPECT_GT(a.failures, 0) << "seed " << seed << ": the HBM is meant to be too small";
  }
}

// Buffer ops from the shared generator, interleaved with program loads, runs
// and unloads drawn from a second seeded stream. Returns a digest.
std::string RunWithPrograms(TpuAllocator& a, uint64_t seed, std::string* error) {
  const std::vector<Op> ops = GenerateProgram(seed, SmallHbmShape());
  std::mt19937_64 rng(seed * 7919);
  std::map<uint64_t, Handle> handles;
  std::string digest;
  for (size_t i = 0; i < ops.size(); ++i) {
    const EventIndex event(i);
    if (rng() % 8 == 0) {
      const ProgramId pid(rng() % 6);
      const uint64_t action = rng() % 4;
      ProgramResult r;
      if (action == 0) r = a.LoadProgram(pid, Bytes(1 + rng() % (6 << 20)), event);
      if (action == 1 || action == 2) r = a.RunProgram(pid, event);
      if (action == 3) a.UnloadProgram(pid);
      digest += fmt::format("p{} {} {} {} {}\n", action, pid.value(), r.ok, r.offset.value(), r.size.value());
    }
    const Op& op = ops[i];
    if (op.kind == OpKind::kAlloc) {
      const AllocResult r = Alloc(a, op.id, op.bytes);
      digest += fmt::format("a {} {} {}\n", AllocStatusName(r.status), r.offset.value(), r.size.value());
      if (r.ok()) handles[op.id] = r.handle;
    } else if (auto it = handles.find(op.id); it != handles.end()) {
      if (op.kind == OpKind::kFree) a.Free(it->second);
      if (op.kind == OpKind::kRequestFree) a.RequestFree(it->second);
      if (op.kind == OpKind::kCompleteFree) a.CompleteFree(it->second);
      if (op.kind != OpKind::kRequestFree) handles.erase(it);
    }
    if (absl::Status s = a.CheckInvariants(); !s.ok()) {
      *error = fmt::format("after op {} ({}): {}", i, OpToString(op), std::string(s.message()));
      return digest;
    }
    // The reported largest request must succeed (on a copy: asking changes state).
    const int64_t largest = a.GetStats().largest_free_block_bytes;
    if (largest > 0 && i % 10 == 0) {
      TpuAllocator probe = a;
      probe.set_observer(nullptr);
      if (!Alloc(probe, ~uint64_t{0}, static_cast<uint64_t>(largest)).ok()) {
        *error = fmt::format("after op {}: largest_free_block_bytes {} does not fit", i, largest);
        return digest;
      }
      TpuAllocator over = a;
      over.set_observer(nullptr);
      if (Alloc(over, ~uint64_t{0}, static_cast<uint64_t>(largest) + 512).ok()) {
        Counters before, after;
        a.AppendCounters(before);
        over.AppendCounters(after);
        std::string diff;
        for (size_t c = 0; c < before.size(); ++c)
          diff += fmt::format(" {}:{}->{}", before[c].name, before[c].value, after[c].value);
        *error = fmt::format("after op {}: 512 B more than largest_free_block_bytes {} fits;{} q{} d{} e{}",
                             i, largest, diff, a.options().queued_free_retry, a.options().defragment,
                             a.options().evict_programs);
        return digest;
      }
    }
  }
  Counters counters;
  a.AppendCounters(counters);
  for (const Counter& c : counters) digest += fmt::format("{} {}\n", c.name, c.value);
  return digest;
}

TEST(TpuPropertyTest, ProgramsAndQueuedFreesKeepInvariantsAndAreDeterministic) {
  for (int seed = 1; seed <= 10; ++seed) {
    TpuAllocator first(Variant(seed));
    TpuAllocator second(Variant(seed));
    std::string error_a, error_b;
    const std::string a = RunWithPrograms(first, seed, &error_a);
    const std::string b = RunWithPrograms(second, seed, &error_b);
    ASSERT_EQ(error_a, "") << "seed " << seed;
    EXPECT_EQ(a, b) << "seed " << seed;
    EXPECT_GT(first.counters().programs_evicted + first.counters().program_load_failures, 0)
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace hbmsim::testing
