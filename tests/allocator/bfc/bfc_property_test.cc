// Properties over many random programs (tests/common/random_ops.h), across
// allow_growth x garbage_collection x region_coalescing x limits (and a device
// capacity below the limit, with and without backpedal_once), checked in
// paranoid mode after every op; and the host-footprint property.
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"
#include "tests/common/random_ops.h"
#include "tests/common/sanitized_build.h"

namespace hbmsim::testing {
namespace {

struct Config {
  uint64_t limit;
  bool allow_growth;
  bool garbage_collection;
  bool region_coalescing;
  std::optional<uint64_t> capacity = std::nullopt;
  bool backpedal_once = false;
};

BfcOptions OptionsFor(const Config& c) {
  BfcOptions o = Limit(c.limit);
  o.allow_growth = c.allow_growth;
  o.garbage_collection = c.garbage_collection;
  o.region_coalescing = c.region_coalescing;
  if (c.capacity) o.device_capacity = Bytes(*c.capacity);
  o.backpedal_once = c.backpedal_once;
  return o;
}

std::vector<Config> AllConfigs() {
  std::vector<Config> out;
  for (uint64_t limit : {64 * kMiB, 256 * kMiB + 100, 1024 * kMiB}) {
    for (int bits = 0; bits < 32; ++bits) {
      Config c{limit, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
      // The device holds 60% of the limit: Extends get refused and backpedal.
      if ((bits & 8) != 0) c.capacity = limit / 10 * 6;
      c.backpedal_once = (bits & 16) != 0;
      if (c.backpedal_once && !c.capacity) continue;
      out.push_back(c);
    }
  }
  return out;
}

std::string Describe(const Config& c, uint64_t seed) {
  return fmt::format("limit={} growth={} gc={} coalescing={} capacity={} once={} seed={}", c.limit,
                     c.allow_growth, c.garbage_collection, c.region_coalescing, c.capacity.value_or(0),
                     c.backpedal_once, seed);
}

int64_t InUseBytesByWalk(const BfcAllocator& a) {
  int64_t sum = 0;
  for (const BlockInfo& b : Blocks(a)) {
    if (b.state == BlockState::kInUse) sum += static_cast<int64_t>(b.size.value());
  }
  return sum;
}

// Everything observable: the map (with handles) and the stats.
std::string Observable(const BfcAllocator& a) {
  const AllocatorStats s = a.GetStats();
  return fmt::format("{} / {} {} {} {} {} {}", Map(a), s.num_allocs, s.bytes_in_use, s.peak_bytes_in_use,
                     s.largest_alloc_size, s.largest_free_block_bytes, s.pool_bytes.value_or(-1));
}

// largest_free_block_bytes is exact. `first` and `second` are in the same
// state: one granule more fails on `first`, the number itself succeeds on
// `second`. With a device that never refuses the failure changes nothing (the
// reason REF's retry loop is invisible in a replay); with a capacity it leaves
// a fixed point, so a retry changes nothing.
void ExpectLargestRequestIsExact(BfcAllocator& first, BfcAllocator& second, const Config& config,
                                 const std::string& where) {
  const uint64_t largest = static_cast<uint64_t>(first.GetStats().largest_free_block_bytes);
  ASSERT_EQ(Observable(first), Observable(second)) << where;
  std::string before = Observable(first);
  const AllocResult too_big = Alloc(first, 1u << 30, largest + 1);
  EXPECT_FALSE(too_big.ok()) << where;
  if (config.capacity) {
    before = Observable(first);
    EXPECT_FALSE(Alloc(first, 1u << 30, largest + 1).ok()) << where;
  } else {
    EXPECT_EQ(too_big.largest_free_block, Bytes(largest)) << where;
  }
  EXPECT_EQ(Observable(first), before) << where;
  if (largest == 0) return;
  const AllocResult fits = Alloc(second, (1u << 30) + 1, largest);
  EXPECT_TRUE(fits.ok()) << where;
  EXPECT_TRUE(second.CheckInvariants().ok()) << where << ": " << second.CheckInvariants().message();
}

// 4 seeds under the sanitizers (tests/common/sanitized_build.h).
constexpr int kSeeds = ForThisBuild(12, 4);

TEST(BfcPropertyTest, RandomProgramsKeepInvariantsAndReplayIdentically) {
  ProgramShape shape;
  shape.num_ops = 1500;
  int runs_with_failures = 0;
  std::map<std::string, int64_t> counter_totals;
  for (const Config& config : AllConfigs()) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      const std::string where = Describe(config, seed);
      const std::vector<Op> ops = GenerateProgram(seed, shape);
      BfcAllocator first(OptionsFor(config));
      const RunOutcome a = RunProgram(first, ops, /*paranoid=*/true);
      ASSERT_TRUE(a.invariants.ok()) << where << ": " << a.invariants.message();
      EXPECT_EQ(first.GetStats().bytes_in_use, InUseBytesByWalk(first)) << where;
      BfcAllocator second(OptionsFor(config));
      const RunOutcome b = RunProgram(second, ops, /*paranoid=*/false);
      EXPECT_EQ(a.digest, b.digest) << where;
      EXPECT_EQ(Map(first), Map(second)) << where;
      if (a.failures > 0) ++runs_with_failures;
      Counters counters;
      first.AppendCounters(counters);
      for (const Counter& c : counters) counter_totals[c.name] += c.value;
      ExpectLargestRequestIsExact(first, second, config, where);
    }
  }
  // The limits are chosen so that both outcomes are exercised.
  EXPECT_GT(runs_with_failures, 0);
  EXPECT_LT(runs_with_failures, static_cast<int>(AllConfigs().size()) * kSeeds);
  // ... and so are garbage collection, in-place region growth and backpedal.
  EXPECT_GT(counter_totals["garbage_collections"], 0);
  EXPECT_GT(counter_totals["device_alloc_failures"], 0);
  EXPECT_GT(counter_totals["regions_released"], counter_totals["garbage_collections"]);
  EXPECT_GT(counter_totals["region_extensions"], 0);
}

TEST(BfcPropertyTest, FailedRequestsLeaveNoTraceOrAFixedPoint) {
  // Allocations only, so occupancy climbs to the limit and many fail. Without
  // a capacity a failure changes nothing; with one, a retry changes nothing.
  ProgramShape shape;
  shape.num_ops = 800;
  for (const Config& config : AllConfigs()) {
    if (config.limit != 64 * kMiB) continue;
    BfcAllocator a(OptionsFor(config));
    uint64_t failures = 0;
    for (const Op& op : GenerateProgram(99, shape)) {
      if (op.kind != OpKind::kAlloc) continue;
      std::string before = Observable(a);
      if (Alloc(a, op.id, op.bytes).ok()) continue;
      ++failures;
      if (config.capacity) {
        before = Observable(a);
        ASSERT_FALSE(Alloc(a, op.id, op.bytes).ok()) << Describe(config, 99);
      }
      ASSERT_EQ(Observable(a), before) << Describe(config, 99);
    }
    EXPECT_GT(failures, 10u) << Describe(config, 99);
  }
}

TEST(BfcFootprintTest, HostMemoryDoesNotGrowWithTheLimit) {
  ProgramShape shape;
  shape.num_ops = 20000;
  shape.max_bytes = kMiB;
  const std::vector<Op> ops = GenerateProgram(7, shape);
  BfcAllocator small(Limit(1024 * kMiB));        // 1 GiB
  BfcAllocator huge(Limit(1024 * 1024 * kMiB));  // 1 TiB
  const RunOutcome a = RunProgram(small, ops, /*paranoid=*/false);
  const RunOutcome b = RunProgram(huge, ops, /*paranoid=*/false);
  EXPECT_EQ(a.failures, 0);
  EXPECT_EQ(b.failures, 0);
  EXPECT_EQ(small.chunk_records(), huge.chunk_records());
  EXPECT_EQ(small.host_footprint_bytes(), huge.host_footprint_bytes());
  // A per-256-byte table at 1 TiB would need 4 Gi entries; the records here
  // are bounded by the peak number of chunks.
  EXPECT_LT(huge.host_footprint_bytes(), 1024 * kKiB);
  EXPECT_GT(huge.chunk_records(), 100u);
}

}  // namespace
}  // namespace hbmsim::testing
