// What the cuda_async model does at the limit, worked out by hand: remapping
// cached granules, internal dependencies on another stream's queued free,
// granules pinned by small live buffers (a fragmentation verdict), the
// release threshold, and requests larger than the pool.
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/allocator/cuda_async/cuda_async_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(CudaAsyncLimitTest, CachedGranulesAreRemappedForANewRange) {
  CudaAsyncAllocator a(SmallPool(4096));  // 4 physical granules
  const Handle w = Alloc(a, 1, 1024).handle;
  Alloc(a, 2, 1024);
  const Handle y = Alloc(a, 3, 1024).handle;
  Alloc(a, 4, 1024);
  a.Free(w);
  a.Free(y);
  // No 2 KiB hole and no room to map more: granules 2 and 0 move (highest first).
  const AllocResult r = Alloc(a, 5, 2048);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 4096u);
  EXPECT_EQ(CounterValue(a, "granules_remapped"), 2);
  EXPECT_EQ(Map(a),
            "0:1024:unmapped 1024:1024:in_use 2048:1024:unmapped 3072:1024:in_use | "
            "4096:2048:in_use 6144:2048:unmapped");
  EXPECT_EQ(a.GetStats().pool_bytes, 4096);
}

TEST(CudaAsyncLimitTest, GranulesPinnedBySmallBuffersFailAsFragmentation) {
  CudaAsyncAllocator a(SmallPool(4096));
  const Handle h1 = Alloc(a, 1, 1024).handle;  // @0
  EXPECT_EQ(Alloc(a, 2, 256).offset.value(), 1024u);
  const Handle h3 = Alloc(a, 3, 768).handle;   // @1280
  const Handle h4 = Alloc(a, 4, 1024).handle;  // @2048
  EXPECT_EQ(Alloc(a, 5, 256).offset.value(), 3072u);
  const Handle h6 = Alloc(a, 6, 768).handle;  // @3328
  for (Handle h : {h1, h3, h4, h6}) a.Free(h);
  // 512 bytes live, but they pin granules 1 and 3: only 2 granules can move.
  const AllocResult r = Alloc(a, 7, 3072);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.rounded.value(), 3072u);
  EXPECT_EQ(r.free_bytes.value(), 3584u);
  EXPECT_EQ(r.largest_free_block.value(), 2048u);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 2048);
  EXPECT_EQ(Alloc(a, 8, 2304).status, AllocStatus::kFragmentation);
  const AllocResult fits = Alloc(a, 9, 2048);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits.offset.value(), 4096u);
  EXPECT_EQ(CounterValue(a, "granules_remapped"), 2);
}

TEST(CudaAsyncLimitTest, AFreeBlockNextToAPinnedGranuleCostsLess) {
  CudaAsyncAllocator a(SmallPool(3072));       // 3 granules
  const Handle h1 = Alloc(a, 1, 1024).handle;  // @0
  Alloc(a, 2, 256);                            // @1024, pins granule 1
  const Handle h3 = Alloc(a, 3, 1792).handle;  // @1280, to the end of granule 2
  a.Free(h1);
  a.Free(h3);  // merges with the range's unmapped tail: 2816 free bytes @1280
  // Budget: 3 granules - 1 held = 2. The block at 1280 starts inside held
  // granule 1, so all of it (granules 1, 2, 3) costs 2: more than a new
  // range's 2048 bytes.
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 2816);
  const AllocResult r = Alloc(a, 4, 2816);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 1280u);
  EXPECT_EQ(CounterValue(a, "granules_remapped"), 1);  // granule 0 moves to granule 3
  EXPECT_EQ(Map(a), "0:1024:unmapped 1024:256:in_use 1280:2816:in_use");
}

TEST(CudaAsyncLimitTest, InternalDependenciesReuseAnotherStreamsQueuedFree) {
  CudaAsyncAllocator a(SmallPool(2048));
  const Handle h = Alloc(a, 1, 2048, /*stream=*/1).handle;
  a.RequestFree(h);
  const AllocResult r = Alloc(a, 2, 1024, /*stream=*/2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "internal_dependency_reuses"), 1);
  EXPECT_EQ(Map(a), "0:1024:in_use 1024:1024:pending_free 2048:2048:unmapped");
  a.CompleteFree(h);  // the rest of the queued block becomes free
  EXPECT_EQ(Map(a), "0:1024:in_use 1024:1024:free 2048:2048:unmapped");
}

TEST(CudaAsyncLimitTest, WithoutInternalDependenciesTheOtherStreamFails) {
  CudaAsyncOptions o = SmallPool(2048);
  o.internal_dependencies = false;
  CudaAsyncAllocator a(o);
  const Handle h = Alloc(a, 1, 2048, /*stream=*/1).handle;
  a.RequestFree(h);
  const AllocResult r = Alloc(a, 2, 1024, /*stream=*/2);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes.value(), 0u);
  EXPECT_EQ(r.largest_free_block.value(), 0u);
  // The freeing stream itself still may.
  EXPECT_EQ(Alloc(a, 3, 1024, /*stream=*/1).offset.value(), 0u);
}

TEST(CudaAsyncLimitTest, ReleaseThresholdZeroGivesEverythingBack) {
  CudaAsyncOptions o = SmallPool(8192);
  o.release_threshold = 0;
  CudaAsyncAllocator a(o);
  a.Free(Alloc(a, 1, 1024).handle);
  EXPECT_EQ(Map(a), "");
  EXPECT_EQ(a.GetStats().pool_bytes, 0);
  EXPECT_EQ(a.GetStats().peak_pool_bytes, 1024);
  EXPECT_EQ(CounterValue(a, "granules_released"), 1);
  EXPECT_EQ(CounterValue(a, "ranges_released"), 1);
  // The device never hands out an address twice.
  EXPECT_EQ(Alloc(a, 2, 1024).offset.value(), 4096u);
}

TEST(CudaAsyncLimitTest, ReleaseThresholdKeepsThatMuchMapped) {
  CudaAsyncOptions o = SmallPool(8192);
  o.release_threshold = 2048;
  CudaAsyncAllocator a(o);
  const Handle x = Alloc(a, 1, 1024).handle;
  const Handle y = Alloc(a, 2, 1024).handle;
  const Handle z = Alloc(a, 3, 1024).handle;
  a.Free(x);  // 3 granules mapped > 2: x's own granule goes
  a.Free(y);
  a.Free(z);
  EXPECT_EQ(Map(a), "0:1024:unmapped 1024:2048:free 3072:1024:unmapped");
  EXPECT_EQ(a.GetStats().pool_bytes, 2048);
  EXPECT_EQ(CounterValue(a, "granules_released"), 1);
}

TEST(CudaAsyncLimitTest, ARequestLargerThanThePoolIsOom) {
  CudaAsyncAllocator a(SmallPool(4096));
  const AllocResult r = Alloc(a, 1, 5000);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.rounded.value(), 5120u);
  EXPECT_EQ(r.free_bytes.value(), 4096u);
  EXPECT_EQ(r.largest_free_block.value(), 4096u);
  const AllocResult huge = Alloc(a, 2, ~uint64_t{0});
  EXPECT_EQ(huge.status, AllocStatus::kOom);
  EXPECT_EQ(Map(a), "");
}

TEST(CudaAsyncLimitTest, ALimitBelowOneGranuleHoldsNothing) {
  CudaAsyncAllocator a(SmallPool(1000));
  EXPECT_EQ(a.physical_granules(), 0u);
  EXPECT_EQ(Alloc(a, 1, 256).status, AllocStatus::kOom);
}

}  // namespace
}  // namespace hbmsim::testing
