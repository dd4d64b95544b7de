// Growing the pool (REF §1.7): region sizes, the doubling rules, limits that
// are not multiples of 256, region coalescing; zero-byte and absurd requests.
#include <limits>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

BfcOptions Growth(uint64_t limit) {
  BfcOptions o = Limit(limit);
  o.allow_growth = true;
  return o;
}

TEST(BfcGrowthTest, WithoutGrowthTheFirstRegionIsTheWholeLimit) {
  BfcAllocator a(Limit(64 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(64 * kMiB));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(0));  // nothing until the first request
  Alloc(a, 1, 1);
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(64 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(128 * kMiB));  // doubled after success
}

// first_region (1 MiB as in TF 1.x-2.1 and the TF profiles of 2022-2023):
// 512 KiB takes region 0 = [0, 1 MiB) and curr doubles to 2 MiB; 1.5 MiB fits
// no free chunk, so region 1 = [1 MiB, 3 MiB), handed out whole (2 MiB <
// 2 * 1.5 MiB, 0.5 MiB < 128 MiB); curr doubles to 4 MiB. A pool of an odd
// number of MiB, which growth from 2 MiB never makes.
TEST(BfcGrowthTest, GrowthFromAOneMibFirstRegion) {
  BfcOptions o = Growth(64 * kMiB);
  o.first_region = Bytes::MiB(1);
  BfcAllocator a(o);
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(kMiB));
  EXPECT_EQ(Alloc(a, 1, kMiB / 2).offset, Offset(0));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(2 * kMiB));
  const AllocResult r = Alloc(a, 2, 3 * kMiB / 2);
  EXPECT_EQ(r.offset, Offset(kMiB));
  EXPECT_EQ(r.size, Bytes(2 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(4 * kMiB));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(3 * kMiB));
}

TEST(BfcGrowthTest, GrowthDoublesAndRequestsAboveCurrDoubleSeveralTimes) {
  BfcAllocator a(Growth(64 * kMiB));
  EventLog log;
  a.set_observer(&log);
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(2 * kMiB));
  // 1 MiB: region 0 = [0, 2 MiB); curr doubles to 4 MiB.
  EXPECT_EQ(Alloc(a, 1, kMiB).offset, Offset(0));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(4 * kMiB));
  // 20 MiB: curr doubles 4 -> 8 -> 16 -> 32 MiB before the Extend, and not
  // again after it. Region 1 = [2 MiB, 34 MiB); 32 MiB < 2*20 MiB and the
  // 12 MiB remainder < 128 MiB, so the whole region is handed out.
  AllocResult r = Alloc(a, 2, 20 * kMiB);
  EXPECT_EQ(r.offset, Offset(2 * kMiB));
  EXPECT_EQ(r.size, Bytes(32 * kMiB));
  EXPECT_EQ(r.rounded, Bytes(20 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(32 * kMiB));
  // 2 MiB: no free chunk fits (1 MiB); Extend takes min(32 MiB, 64-34 = 30 MiB).
  r = Alloc(a, 3, 2 * kMiB);
  EXPECT_EQ(r.offset, Offset(34 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(64 * kMiB));
  EXPECT_EQ(
      Map(a),
      "[0+2097152] U0+1048576 h0>1, F1048576+1048576 h1>- | [2097152+33554432] U2097152+33554432 h2>- | "
      "[35651584+31457280] U35651584+2097152 h3>4, F37748736+29360128 h4>-");
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_added 2097152@0", "region_added 33554432@2097152",
                                                  "region_added 31457280@35651584"}));
  const AllocatorStats s = a.GetStats();
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.bytes_in_use, 35 * kMiB);
  EXPECT_EQ(s.largest_alloc_size, 32 * kMiB);
  EXPECT_EQ(s.pool_bytes, std::optional<int64_t>(64 * kMiB));
  EXPECT_EQ(s.largest_free_block_bytes, 28 * kMiB);
  Counters c;
  a.AppendCounters(c);
  EXPECT_EQ(c, (Counters{{"regions", 3},
                         {"extends", 3},
                         {"region_extensions", 0},
                         {"garbage_collections", 0},
                         {"regions_released", 0},
                         {"device_alloc_failures", 0}}));
  EXPECT_INVARIANTS(a);

  // 29 MiB free in total (1 + 28) but 28 MiB contiguous at most: fragmentation.
  r = Alloc(a, 4, 29 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.free_bytes, Bytes(29 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(28 * kMiB));
  EXPECT_EQ(r.rounded, Bytes(29 * kMiB));
  EXPECT_EQ(r.size, Bytes(0));
  // 256 bytes more than is free: oom.
  r = Alloc(a, 5, 29 * kMiB + 1);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(29 * kMiB));
  EXPECT_EQ(a.GetStats().num_allocs, 3);
}

TEST(BfcGrowthTest, RequestOfExactlyTheAvailableBytesSucceeds) {
  // limit = 10 MiB + 100: after the first 2 MiB region, available =
  // floor256(8 MiB + 100) = 8 MiB.
  BfcAllocator a(Growth(10 * kMiB + 100));
  Alloc(a, 1, kMiB);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 8 * kMiB);
  // curr 4 MiB doubles once to 8 MiB (so no doubling after success).
  const AllocResult r = Alloc(a, 2, 8 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset, Offset(2 * kMiB));
  EXPECT_EQ(r.size, Bytes(8 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(8 * kMiB));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(10 * kMiB));
  // 100 bytes remain below the limit: less than one granule.
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, kMiB);
  EXPECT_INVARIANTS(a);
}

TEST(BfcGrowthTest, LimitThatIsNotAMultipleOf256IsRoundedDownForRegions) {
  BfcAllocator a(Limit(1000));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(1024));  // RoundedBytes(1000)
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 768);
  // 769 -> 1024 > 768 available: oom before any doubling; nothing changes.
  AllocResult r = Alloc(a, 1, 769);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(768));
  EXPECT_EQ(r.largest_free_block, Bytes(768));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(1024));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(0));
  // Exactly 768: region of min(1024, 768) bytes, no split.
  r = Alloc(a, 2, 768);
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(r.size, Bytes(768));
  EXPECT_EQ(Map(a), "[0+768] U0+768 h0>-");
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(2048));
  r = Alloc(a, 3, 1);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(0));  // 232 bytes below the limit are not a granule
  EXPECT_EQ(r.largest_free_block, Bytes(0));
}

TEST(BfcGrowthTest, RegionCoalescingExtendsTheRegionAndMergesItsFreeTail) {
  BfcOptions o = Growth(8 * kMiB);
  o.region_coalescing = true;
  BfcAllocator a(o);
  EventLog log;
  a.set_observer(&log);
  Alloc(a, 1, kMiB);  // [0, 2 MiB): A h0, free tail h1 at 1 MiB
  // 1.5 MiB: Extend gets 4 MiB at 2 MiB, the end of region 0. The new chunk
  // (h2) is linked after h1 and merged into it (h2 released), so h1 covers
  // [1 MiB, 6 MiB); the split reuses h2 for the remainder.
  AllocResult r = Alloc(a, 2, kMiB + kMiB / 2);
  EXPECT_EQ(r.offset, Offset(kMiB));
  EXPECT_EQ(Map(a), "[0+6291456] U0+1048576 h0>1, U1048576+1572864 h1>2, F2621440+3670016 h2>-");
  // 3.5 MiB takes the tail exactly; then 256 bytes need the last 2 MiB,
  // which extends the region after an in-use chunk: no merge.
  EXPECT_EQ(Alloc(a, 3, 3 * kMiB + kMiB / 2).offset, Offset(2621440));
  r = Alloc(a, 4, 256);
  EXPECT_EQ(r.offset, Offset(6 * kMiB));
  EXPECT_EQ(Map(a),
            "[0+8388608] U0+1048576 h0>1, U1048576+1572864 h1>2, U2621440+3670016 h2>3, U6291456+256 h3>4, "
            "F6291712+2096896 h4>-");
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_added 2097152@0", "region_extended 4194304@2097152",
                                                  "region_extended 2097152@6291456"}));
  Counters c;
  a.AppendCounters(c);
  EXPECT_EQ(c[0], (Counter{"regions", 1}));
  EXPECT_EQ(c[1], (Counter{"extends", 3}));
  EXPECT_EQ(c[2], (Counter{"region_extensions", 2}));
  EXPECT_INVARIANTS(a);
}

TEST(BfcGrowthTest, ZeroByteRequestReservesNothing) {
  BfcAllocator a(Growth(8 * kMiB));
  const AllocResult r = Alloc(a, 1, 0);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.handle, kNullHandle);
  EXPECT_FALSE(r.has_offset);
  EXPECT_EQ(r.size, Bytes(0));
  EXPECT_EQ(r.rounded, Bytes(0));
  EXPECT_EQ(a.GetStats().num_allocs, 0);
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(0));  // no Extend either
  a.Free(kNullHandle);
  EXPECT_EQ(Map(a), "");
  EXPECT_INVARIANTS(a);
}

TEST(BfcGrowthTest, RequestNear2To64FailsAsOomWithoutWrapping) {
  BfcOptions o = Growth(kKiB * kMiB);  // 1 GiB
  o.garbage_collection = true;
  BfcAllocator a(o);
  Alloc(a, 1, kMiB);
  a.Free(Handle(0));  // one fully free 2 MiB region, so GC is considered too
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (uint64_t bytes : {kMax, kMax - 254, kMax - 300}) {
    const AllocResult r = Alloc(a, 2, bytes);
    EXPECT_EQ(r.status, AllocStatus::kOom) << bytes;
    EXPECT_EQ(r.free_bytes, Bytes(kKiB * kMiB));  // 2 MiB free in the pool + 1022 MiB below the limit
    EXPECT_EQ(r.largest_free_block, Bytes(kKiB * kMiB));
  }
  EXPECT_EQ(Alloc(a, 3, kMax).rounded, Bytes::Max());
  EXPECT_EQ(Alloc(a, 4, kMax - 254).rounded, Bytes::Max());  // rounding up would wrap: saturated
  EXPECT_EQ(Alloc(a, 5, kMax - 300).rounded, Bytes(kMax - 255));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(2 * kMiB));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(4 * kMiB));
  EXPECT_INVARIANTS(a);
}

}  // namespace
}  // namespace hbmsim::testing
