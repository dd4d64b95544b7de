// The reuse rules of the cuda_async model, each worked out by hand: rounding,
// ranges reserved on demand, best fit at a block's low end, coalescing,
// same-stream reuse of a queued free, opportunistic reuse after completion.
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/allocator/cuda_async/cuda_async_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(CudaAsyncReuseTest, RoundsAndReservesARangeOnDemand) {
  CudaAsyncAllocator a(SmallPool(8192));
  EXPECT_EQ(Map(a), "");
  const AllocResult r = Alloc(a, 1, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(r.rounded.value(), 256u);
  EXPECT_EQ(r.size.value(), 256u);
  // One 4 KiB range; only the granule the buffer touches is mapped.
  EXPECT_EQ(Map(a), "0:256:in_use 256:768:free 1024:3072:unmapped");
  EXPECT_EQ(a.GetStats().pool_bytes, 1024);
  EXPECT_EQ(a.GetStats().bytes_in_use, 256);
  EXPECT_EQ(CounterValue(a, "va_ranges"), 1);
}

TEST(CudaAsyncReuseTest, ZeroBytesTakeNothing) {
  CudaAsyncAllocator a(SmallPool(8192));
  const AllocResult r = Alloc(a, 1, 0);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.handle, kNullHandle);
  EXPECT_FALSE(r.has_offset);
  EXPECT_EQ(Map(a), "");
  EXPECT_EQ(a.GetStats().num_allocs, 0);
}

TEST(CudaAsyncReuseTest, BestFitTakesTheLowEndOfTheSmallestBlock) {
  CudaAsyncAllocator a(SmallPool(8192));
  Alloc(a, 1, 1024);                         // @0
  const Handle b = Alloc(a, 2, 512).handle;  // @1024
  Alloc(a, 3, 1024);                         // @1536
  const Handle d = Alloc(a, 4, 512).handle;  // @2560
  a.Free(b);                                 // free 512 @1024
  a.Free(d);                                 // free 1536 @2560 (merged with the tail)
  EXPECT_EQ(Map(a), "0:1024:in_use 1024:512:free 1536:1024:in_use 2560:512:free 3072:1024:unmapped");
  EXPECT_EQ(Alloc(a, 5, 512).offset.value(), 1024u);   // the 512-byte block fits exactly
  EXPECT_EQ(Alloc(a, 6, 1024).offset.value(), 2560u);  // maps granule 3
  EXPECT_EQ(Map(a), "0:1024:in_use 1024:512:in_use 1536:1024:in_use 2560:1024:in_use 3584:512:free");
  EXPECT_EQ(a.GetStats().pool_bytes, 4096);
}

TEST(CudaAsyncReuseTest, FreeBlocksCoalesceWithinARange) {
  CudaAsyncAllocator a(SmallPool(8192));
  const Handle x = Alloc(a, 1, 1024).handle;
  const Handle y = Alloc(a, 2, 1024).handle;
  const Handle z = Alloc(a, 3, 1024).handle;
  a.Free(x);
  a.Free(z);
  EXPECT_EQ(Map(a), "0:1024:free 1024:1024:in_use 2048:1024:free 3072:1024:unmapped");
  a.Free(y);
  EXPECT_EQ(Map(a), "0:3072:free 3072:1024:unmapped");
  // One block again: a request of the whole range fits at 0.
  const AllocResult r = Alloc(a, 4, 4096);
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "va_ranges_reserved"), 1);
}

TEST(CudaAsyncReuseTest, TheFreeingStreamReusesAQueuedFreeAtOnce) {
  CudaAsyncAllocator a(SmallPool(8192));
  const Handle h = Alloc(a, 1, 1024, /*stream=*/1).handle;
  a.RequestFree(h);
  EXPECT_EQ(Map(a), "0:1024:pending_free 1024:3072:unmapped");
  const AllocResult r = Alloc(a, 2, 512, /*stream=*/1);
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "same_stream_reuses"), 1);
  EXPECT_EQ(Map(a), "0:512:in_use 512:512:pending_free 1024:3072:unmapped");
  EXPECT_EQ(a.GetStats().bytes_in_use, 1024);  // the queued rest is still held
  a.CompleteFree(h);                           // the rest keeps the buffer's handle
  EXPECT_EQ(Map(a), "0:512:in_use 512:512:free 1024:3072:unmapped");
  EXPECT_EQ(a.GetStats().bytes_in_use, 512);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(CudaAsyncReuseTest, AnotherStreamWaitsForTheFreeToComplete) {
  CudaAsyncAllocator a(SmallPool(8192));
  const Handle h = Alloc(a, 1, 1024, /*stream=*/1).handle;
  a.RequestFree(h);
  EXPECT_EQ(Alloc(a, 2, 1024, /*stream=*/2).offset.value(), 1024u);
  a.CompleteFree(h);  // opportunistic: every stream may take it now
  EXPECT_EQ(Alloc(a, 3, 1024, /*stream=*/2).offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "same_stream_reuses"), 0);
}

TEST(CudaAsyncReuseTest, WithoutOpportunisticReuseACompletedFreeStaysItsStreams) {
  CudaAsyncOptions o = SmallPool(8192);
  o.opportunistic = false;
  CudaAsyncAllocator a(o);
  const Handle h = Alloc(a, 1, 1024, /*stream=*/1).handle;
  a.RequestFree(h);
  a.CompleteFree(h);
  EXPECT_EQ(Map(a), "0:1024:pending_free 1024:3072:unmapped");
  EXPECT_EQ(Alloc(a, 2, 1024, /*stream=*/2).offset.value(), 1024u);
  EXPECT_EQ(Alloc(a, 3, 1024, /*stream=*/1).offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "same_stream_reuses"), 1);
}

TEST(CudaAsyncReuseTest, PreallocationMapsTheWholeLimitInOneRange) {
  CudaAsyncOptions o = SmallPool(4096);
  o.preallocate = true;
  CudaAsyncAllocator a(o);
  EXPECT_EQ(Map(a), "0:4096:free");
  EXPECT_EQ(a.GetStats().pool_bytes, 4096);
  EXPECT_EQ(Alloc(a, 1, 3000).offset.value(), 0u);
  EXPECT_EQ(CounterValue(a, "va_ranges_reserved"), 1);
  EXPECT_EQ(Map(a), "0:3072:in_use 3072:1024:free");
}

}  // namespace
}  // namespace hbmsim::testing
