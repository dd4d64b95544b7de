// Garbage collection of fully free regions (REF §1.9 step 4), the failure
// verdicts and largest_free_block_bytes in each of its cases.
//
// GC fixture: limit 4 MiB, allow_growth, GC on, no region coalescing.
//   A = 1 MiB   -> region 0 = [0, 2 MiB): A h0 @0, free h1 @1 MiB; curr 4 MiB
//   B = 1.5 MiB -> region 1 = [2 MiB, 4 MiB) = min(curr 4 MiB, available
//                  2 MiB), handed out whole (2 MiB < 3 MiB, 0.5 MiB < 128 MiB)
//                  as h2; curr 8 MiB; the pool is at the limit.
#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

class BfcGcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BfcOptions o = Limit(4 * kMiB);
    o.allow_growth = true;
    o.garbage_collection = true;
    a_ = std::make_unique<BfcAllocator>(o);
    a_->set_observer(&log_);
    ASSERT_EQ(Alloc(*a_, 1, kMiB).handle, Handle(0));
    ASSERT_EQ(Alloc(*a_, 2, kMiB + kMiB / 2).handle, Handle(2));
    ASSERT_EQ(Map(*a_),
              "[0+2097152] U0+1048576 h0>1, F1048576+1048576 h1>- | [2097152+2097152] U2097152+2097152 h2>-");
    log_.events.clear();
  }
  std::unique_ptr<BfcAllocator> a_;
  EventLog log_;
};

TEST_F(BfcGcTest, ReleasesEveryFreeRegionAndExtendsAtTheNextDeviceAddress) {
  a_->Free(Handle(0));  // h1 merges into h0 (h1 released): region 0 fully free
  a_->Free(Handle(2));  // region 1 fully free
  // GC term: floor256(limit - pool + free regions) = 4 MiB.
  EXPECT_EQ(a_->GetStats().largest_free_block_bytes, 4 * kMiB);
  // 3 MiB: no chunk fits, nothing to Extend, 3 MiB <= 0 + 4 MiB: both regions
  // go back (handles h0 then h2 released), then Extend takes min(curr 8 MiB,
  // 4 MiB) at device address 4 MiB (the device never reuses addresses) with
  // the top of the handle stack, h2. 4 MiB < 6 MiB: no split.
  const AllocResult r = Alloc(*a_, 3, 3 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.handle, Handle(2));
  EXPECT_EQ(r.offset, Offset(4 * kMiB));
  EXPECT_EQ(r.size, Bytes(4 * kMiB));
  EXPECT_EQ(Map(*a_), "[4194304+4194304] U4194304+4194304 h2>-");
  EXPECT_EQ(log_.events,
            (std::vector<std::string>{"garbage_collection 4194304@0 #2", "region_released 2097152@0",
                                      "region_released 2097152@2097152", "region_added 4194304@4194304"}));
  EXPECT_EQ(a_->curr_region_allocation_bytes(), Bytes(16 * kMiB));
  const AllocatorStats s = a_->GetStats();
  EXPECT_EQ(s.pool_bytes, std::optional<int64_t>(4 * kMiB));
  EXPECT_EQ(s.peak_pool_bytes, std::optional<int64_t>(4 * kMiB));
  EXPECT_EQ(s.bytes_in_use, 4 * kMiB);
  Counters c;
  a_->AppendCounters(c);
  EXPECT_EQ(c, (Counters{{"regions", 1},
                         {"extends", 3},
                         {"region_extensions", 0},
                         {"garbage_collections", 1},
                         {"regions_released", 2},
                         {"device_alloc_failures", 0}}));
  EXPECT_INVARIANTS(*a_);
  // The next split takes h0 (released after h1, before h2 was reused).
  a_->Free(Handle(2));
  Alloc(*a_, 4, 256);
  EXPECT_EQ(Map(*a_), "[4194304+4194304] U4194304+256 h2>0, F4194560+4194048 h0>-");
}

TEST_F(BfcGcTest, DeclinesWhenReleasingCannotMakeTheRequestFit) {
  a_->Free(Handle(0));
  a_->Free(Handle(2));
  // 4 MiB + 256 > 0 + 4 MiB: nothing is released; 4 MiB free < request: oom.
  const AllocResult r = Alloc(*a_, 3, 4 * kMiB + 1);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(4 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(4 * kMiB));
  EXPECT_TRUE(log_.events.empty());
  EXPECT_EQ(a_->GetStats().pool_bytes, std::optional<int64_t>(4 * kMiB));
  EXPECT_INVARIANTS(*a_);
}

TEST_F(BfcGcTest, DeclinesWhenTheOnlyFreeRegionIsTooSmall) {
  a_->Free(Handle(0));  // region 0 free (2 MiB); region 1 still holds B
  // 3 MiB > 0 + 2 MiB: declined; 2 MiB free in the pool < 3 MiB: oom.
  const AllocResult r = Alloc(*a_, 3, 3 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(2 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(2 * kMiB));
  EXPECT_TRUE(log_.events.empty());
  // 2 MiB fits the free region's chunk directly: no GC needed.
  EXPECT_EQ(Alloc(*a_, 4, 2 * kMiB).offset, Offset(0));
  EXPECT_TRUE(log_.events.empty());
}

TEST_F(BfcGcTest, NothingToCollectWhileEveryRegionHoldsABuffer) {
  // Region 0 has 1 MiB free but is not fully free; region 1 is in use.
  EXPECT_EQ(a_->GetStats().largest_free_block_bytes, kMiB);
  const AllocResult r = Alloc(*a_, 3, kMiB + 1);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(kMiB));
  EXPECT_TRUE(log_.events.empty());
}

TEST(BfcGcOffTest, FreeRegionsStayWithoutGarbageCollection) {
  BfcOptions o = Limit(4 * kMiB);
  o.allow_growth = true;
  BfcAllocator a(o);
  Alloc(a, 1, kMiB);
  Alloc(a, 2, kMiB + kMiB / 2);
  a.Free(Handle(0));
  a.Free(Handle(2));
  // Two free 2 MiB regions: largest request 2 MiB, no GC term.
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 2 * kMiB);
  // 3 MiB <= 4 MiB free: a fragmentation verdict; the regions stay.
  const AllocResult r = Alloc(a, 3, 3 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.free_bytes, Bytes(4 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(2 * kMiB));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(4 * kMiB));
}

TEST(BfcVerdictTest, FragmentationWhenHolesSumToTheRequestOomWhenNot) {
  BfcAllocator a(Limit(4 * kMiB));
  // Four 1 MiB buffers fill the single 4 MiB region (the last one exactly).
  for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(Alloc(a, i + 1, kMiB).offset, Offset(i * kMiB));
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 0);
  a.Free(Handle(0));  // [0, 1 MiB)
  a.Free(Handle(2));  // [2 MiB, 3 MiB)
  AllocResult r = Alloc(a, 5, 2 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.handle, kNullHandle);
  EXPECT_FALSE(r.has_offset);
  EXPECT_EQ(r.free_bytes, Bytes(2 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(kMiB));
  EXPECT_EQ(r.rounded, Bytes(2 * kMiB));
  r = Alloc(a, 6, 2 * kMiB + 1);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.rounded, Bytes(2 * kMiB + 256));
  EXPECT_EQ(r.free_bytes, Bytes(2 * kMiB));
}

TEST(BfcLargestFreeBlockTest, EachTermWinsInTurn) {
  BfcOptions o = Limit(16 * kMiB + 300);
  o.allow_growth = true;
  o.garbage_collection = true;
  BfcAllocator a(o);
  // Empty: floor256(16 MiB + 300) = 16 MiB + 256 (Extend term).
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 16 * kMiB + 256);
  // Region 0 = 2 MiB holding 1 MiB: Extend term 14 MiB + 256 still wins.
  Alloc(a, 1, kMiB);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 14 * kMiB + 256);
  // 14 MiB + 256 exactly: curr 4 -> 8 -> 16 MiB; region 1 = 14 MiB + 256,
  // handed out whole. Now only the 1 MiB free chunk remains: chunk term.
  ASSERT_TRUE(Alloc(a, 2, 14 * kMiB + 256).ok());
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, kMiB);
  // Free A: region 0 fully free (2 MiB); GC term floor256(44 + 2 MiB) = 2 MiB,
  // equal to the chunk term.
  a.Free(Handle(0));
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 2 * kMiB);
  // Free B too: GC term floor256(44 + 16 MiB + 256) = 16 MiB + 256 wins over
  // the largest chunk (14 MiB + 256).
  a.Free(Handle(2));
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 16 * kMiB + 256);
  // And the number is honest: that request succeeds, through GC.
  const AllocResult r = Alloc(a, 3, 16 * kMiB + 256);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset, Offset(16 * kMiB + 256));
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 0);
  EXPECT_INVARIANTS(a);
}

}  // namespace
}  // namespace hbmsim::testing
