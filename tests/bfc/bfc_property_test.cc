// Properties over many random programs (tests/common/random_ops.h), across
// allow_growth x garbage_collection x region_coalescing x limits, checked in
// paranoid mode after every op; and the host-footprint property.
#include <map>
#include <string>
#include <tuple>

#include "tests/bfc/bfc_test_util.h"
#include "tests/common/random_ops.h"

namespace hbmsim::testing {
namespace {

struct Config {
  uint64_t limit;
  bool allow_growth;
  bool garbage_collection;
  bool region_coalescing;
};

BfcOptions OptionsFor(const Config& c) {
  BfcOptions o = Limit(c.limit);
  o.allow_growth = c.allow_growth;
  o.garbage_collection = c.garbage_collection;
  o.region_coalescing = c.region_coalescing;
  return o;
}

std::vector<Config> AllConfigs() {
  std::vector<Config> out;
  for (uint64_t limit : {64 * kMiB, 256 * kMiB + 100, 1024 * kMiB}) {
    for (int bits = 0; bits < 8; ++bits)
      out.push_back({limit, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0});
  }
  return out;
}

std::string Describe(const Config& c, uint64_t seed) {
  return fmt::format("limit={} growth={} gc={} coalescing={} seed={}", c.limit, c.allow_growth,
                     c.garbage_collection, c.region_coalescing, seed);
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

// largest_free_block_bytes is exact: one granule more fails without changing
// anything (the reason REF's retry loop is invisible in a replay), and the
// number itself succeeds.
void ExpectLargestRequestIsExact(BfcAllocator& a, const std::string& where) {
  const uint64_t largest = static_cast<uint64_t>(a.GetStats().largest_free_block_bytes);
  const std::string before = Observable(a);
  const AllocResult too_big = Alloc(a, 1u << 30, largest + 1);
  EXPECT_FALSE(too_big.ok()) << where;
  EXPECT_EQ(too_big.largest_free_block, Bytes(largest)) << where;
  EXPECT_EQ(Observable(a), before) << where;
  if (largest == 0) return;
  const AllocResult fits = Alloc(a, (1u << 30) + 1, largest);
  EXPECT_TRUE(fits.ok()) << where;
  EXPECT_TRUE(a.CheckInvariants().ok()) << where << ": " << a.CheckInvariants().message();
}

constexpr int kSeeds = 12;

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
      ExpectLargestRequestIsExact(first, where);
    }
  }
  // The limits are chosen so that both outcomes are exercised.
  EXPECT_GT(runs_with_failures, 0);
  EXPECT_LT(runs_with_failures, static_cast<int>(AllConfigs().size()) * kSeeds);
  // ... and so are garbage collection and in-place region growth.
  EXPECT_GT(counter_totals["garbage_collections"], 0);
  EXPECT_GT(counter_totals["regions_released"], counter_totals["garbage_collections"]);
  EXPECT_GT(counter_totals["region_extensions"], 0);
}

TEST(BfcPropertyTest, FailedRequestsLeaveNoTrace) {
  // Replays a program in which many requests fail, comparing the observable
  // state before and after each failure.
  ProgramShape shape;
  shape.num_ops = 800;
  for (const Config& config : AllConfigs()) {
    if (config.limit != 64 * kMiB) continue;
    BfcAllocator a(OptionsFor(config));
    uint64_t failures = 0;
    for (const Op& op : GenerateProgram(99, shape)) {
      if (op.kind != OpKind::kAlloc) continue;  // allocations only: occupancy climbs to the limit
      const std::string before = Observable(a);
      if (!Alloc(a, op.id, op.bytes).ok()) {
        ++failures;
        ASSERT_EQ(Observable(a), before) << Describe(config, 99);
      }
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
