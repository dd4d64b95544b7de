// The failure ladder: cache flush and retry, OOM verdicts and message, the
// pending-free quirk (faithful vs fixed), max_split_size releases, GC and the
// memory fraction.
#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::kMiB;
using testing::Map;

::testing::AssertionResult StartsWith(const std::string& text, const std::string& prefix) {
  if (text.compare(0, prefix.size(), prefix) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text;
}

TorchOptions Capacity(uint64_t bytes) {
  TorchOptions o;
  o.capacity = Bytes(bytes);
  return o;
}

TEST(TorchLadder, ReleasesTheCacheThenRetriesOnceThenFails) {
  TorchAllocator a(Capacity(40 * kMiB));
  testing::EventLog log;
  a.set_observer(&log);
  const AllocResult x = Alloc(a, 12 * kMiB);  // segment [0, 12 MiB)
  Alloc(a, 1024);                             // small segment [12, 14 MiB)
  a.Free(x.handle);
  // 14 + 28 > 40: cudaMalloc fails, the flush frees the 12 MiB segment, the retry fits.
  const AllocResult c = Alloc(a, 28 * kMiB);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.offset, Offset(14 * kMiB));  // the device never reuses addresses
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);
  EXPECT_EQ(Counter(a, "num_sync_all_streams"), 1);
  EXPECT_EQ(Counter(a, "num_device_free"), 1);
  EXPECT_EQ(Counter(a, "num_ooms"), 0);
  EXPECT_EQ(log.lines,
            (std::vector<std::string>{"region_added 0 12582912 0", "region_added 12582912 2097152 0",
                                      "region_released 0 12582912 0", "cache_flush 0 12582912 0",
                                      "region_added 14680064 29360128 0"}));
  // Nothing left to release: 30 + 20 > 40 fails after a second flush and retry.
  const AllocResult d = Alloc(a, 20 * kMiB);
  EXPECT_EQ(d.status, AllocStatus::kOom);
  EXPECT_EQ(d.rounded, Bytes(20 * kMiB));
  EXPECT_EQ(d.free_bytes, Bytes(12 * kMiB - 1024));
  EXPECT_EQ(d.largest_free_block, Bytes(10 * kMiB));  // a 10 MiB segment still fits
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 2);
  EXPECT_EQ(Counter(a, "num_ooms"), 1);
  ASSERT_TRUE(a.last_oom().has_value());
  EXPECT_TRUE(StartsWith(
      FormatOutOfMemoryMessage(*a.last_oom()),
      "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 40.00 MiB of which "
      "10.00 MiB is free. Of the allocated memory 28.00 MiB is allocated by PyTorch, and 2.00 MiB is "
      "reserved "
      "by PyTorch but unallocated. If reserved but unallocated memory is large"));
  EXPECT_TRUE(Alloc(a, 10 * kMiB).ok());
}

TEST(TorchLadder, FragmentationWhenFreeBytesWouldHoldTheRequest) {
  TorchAllocator a(Capacity(40 * kMiB));
  const AllocResult x = Alloc(a, 3 * kMiB);
  Alloc(a, 3 * kMiB);
  Alloc(a, 14 * kMiB);  // fills the 20 MiB segment exactly
  a.Free(x.handle);     // 3 MiB hole in a split segment: not releasable
  const AllocResult r = Alloc(a, 22 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.free_bytes, Bytes(23 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(20 * kMiB));
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

// A pending free completed by the flush lands in a split segment: PyTorch only
// retries cudaMalloc and raises OOM although the block now fits (issue 189504).
TorchAllocator PendingFreeScenario(bool fixed, Handle* pending) {
  TorchOptions o = Capacity(30 * kMiB);
  o.fixed_retry_search = fixed;
  TorchAllocator a(o);
  const AllocResult x = Alloc(a, 8 * kMiB);
  Alloc(a, 12 * kMiB);  // the rest of the 20 MiB segment
  a.RequestFree(x.handle);
  *pending = x.handle;
  return a;
}

TEST(TorchLadder, FaithfulModeRaisesTheSpuriousOom) {
  Handle pending;
  TorchAllocator a = PendingFreeScenario(/*fixed=*/false, &pending);
  const AllocResult r = Alloc(a, 8 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.largest_free_block, Bytes(10 * kMiB));  // a new 10 MiB segment would fit
  EXPECT_EQ(Counter(a, "num_ooms"), 1);
  EXPECT_EQ(Counter(a, "num_sync_all_streams"), 1);
  EXPECT_EQ(Map(a), "region 0 20971520\n  0 8388608 free\n  8388608 12582912 in_use\n");
  a.CompleteFree(pending);                          // the flush completed it already
  EXPECT_EQ(Alloc(a, 8 * kMiB).offset, Offset(0));  // an immediate retry succeeds
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchLadder, FixedModeSearchesThePoolAfterTheFlush) {
  Handle pending;
  TorchAllocator a = PendingFreeScenario(/*fixed=*/true, &pending);
  const AllocResult r = Alloc(a, 8 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);
  EXPECT_EQ(Counter(a, "num_ooms"), 0);
}

TEST(TorchLadder, MaxSplitSizeReleasesOversizeBlocksBeforeTheFlush) {
  TorchOptions o = Capacity(100 * kMiB);
  o.max_split_size = Bytes(20 * kMiB);
  TorchAllocator a(o);
  const AllocResult x = Alloc(a, 30 * kMiB);
  const AllocResult y = Alloc(a, 40 * kMiB);
  Alloc(a, 3 * kMiB);  // a 20 MiB segment, split
  a.Free(x.handle);
  a.Free(y.handle);
  // 90 + 70 > 100. The smallest oversize block >= 70 MiB: none; so the largest
  // ones go until 70 MiB are freed (40 then 30), without a full flush.
  testing::EventLog log;
  a.set_observer(&log);
  const AllocResult r = Alloc(a, 70 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(log.lines,
            (std::vector<std::string>{"region_released 31457280 41943040 0", "region_released 0 31457280 0",
                                      "region_added 94371840 73400320 0"}));
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 0);
  EXPECT_EQ(Counter(a, "num_sync_all_streams"), 0);
  EXPECT_EQ(Counter(a, "oversize_segments.current"), 2);  // 20 MiB and 70 MiB (>= max_split_size)
}

TEST(TorchLadder, GarbageCollectionReleasesTheOldestBlocksFirst) {
  TorchOptions o = Capacity(100 * kMiB);
  o.per_process_memory_fraction = 1.0;
  o.garbage_collection_threshold = 0.5;
  TorchAllocator a(o);
  a.Free(Alloc(a, 30 * kMiB).handle);  // age clock 1 at caching
  a.Free(Alloc(a, 40 * kMiB).handle);  // 70 MiB reserved; cached at clock 2
  testing::EventLog log;
  a.set_observer(&log);
  // Clock 3: ages 2 and 1, mean 1.5: only the 30 MiB block goes (>= 20 MiB target).
  const AllocResult r = Alloc(a, 50 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset, Offset(70 * kMiB));
  EXPECT_EQ(log.lines,
            (std::vector<std::string>{"region_released 0 31457280 0", "region_added 73400320 52428800 0"}));
}

TEST(TorchLadder, WithoutGcTheSameProgramKeepsItsCache) {
  TorchOptions o = Capacity(100 * kMiB);
  o.per_process_memory_fraction = 1.0;
  TorchAllocator a(o);
  a.Free(Alloc(a, 30 * kMiB).handle);
  a.Free(Alloc(a, 40 * kMiB).handle);
  // 70 + 50 > 100: the flush releases both, then the retry succeeds.
  ASSERT_TRUE(Alloc(a, 50 * kMiB).ok());
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);
  EXPECT_EQ(Counter(a, "num_device_free"), 2);
}

TEST(TorchLadder, TheMemoryFractionFailsFastBeforeCapacity) {
  TorchOptions o = Capacity(100 * kMiB);
  o.per_process_memory_fraction = 0.5;
  TorchAllocator a(o);
  ASSERT_TRUE(Alloc(a, 40 * kMiB).ok());
  const AllocResult r = Alloc(a, 12 * kMiB);  // 40 + 12 > 50 allowed
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(10 * kMiB));
  EXPECT_EQ(a.GetStats().bytes_limit, 100 * kMiB);
  ASSERT_TRUE(a.last_oom().has_value());
  EXPECT_TRUE(StartsWith(
      FormatOutOfMemoryMessage(*a.last_oom()),
      "CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which "
      "60.00 MiB is free. 50.00 MiB allowed; Of the allocated memory 40.00 MiB is allocated by PyTorch, and "
      "0 bytes is reserved by PyTorch but unallocated. If"));
}

TEST(TorchLadder, EmptyCacheReleasesWholeFreeSegmentsOnly) {
  TorchAllocator a({});
  const AllocResult x = Alloc(a, 3 * kMiB);
  a.Free(Alloc(a, 30 * kMiB).handle);
  const AllocResult y = Alloc(a, 1024);
  a.RequestFree(y.handle);
  a.EmptyCache();
  // The pending small block was completed and its whole segment released too.
  EXPECT_EQ(Map(a), "region 0 20971520\n  0 3145728 in_use\n  3145728 17825792 free\n");
  EXPECT_EQ(Counter(a, "num_device_free"), 2);
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 0);
  a.CompleteFree(y.handle);
  a.Free(x.handle);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

}  // namespace
}  // namespace hbmsim::allocator::torch
