// Rules exercised once more at their edges: rounding inside the allocator, the
// single-block oversize release, expandable blocks with the option off, GC
// without a fraction, and the largest satisfiable request.
#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::kMiB;

TEST(TorchEdges, RoundupDivisionsShapeTheBlock) {
  TorchOptions o;
  o.roundup_power2_divisions.fill(4);
  TorchAllocator a(o);
  const AllocResult r = Alloc(a, 5000000);
  EXPECT_EQ(r.rounded, Bytes(5 * kMiB));
  EXPECT_EQ(r.size, Bytes(5 * kMiB));
  EXPECT_EQ(Counter(a, "requested_bytes.large_pool.current"), 5000000);
  EXPECT_EQ(Counter(a, "allocated_bytes.large_pool.current"), 5 * kMiB);
  EXPECT_EQ(Counter(a, "reserved_bytes.large_pool.current"), 20 * kMiB);
}

TEST(TorchEdges, OversizeReleaseFreesTheSmallestSufficientBlock) {
  TorchOptions o;
  o.capacity = Bytes(85 * kMiB);
  o.max_split_size = Bytes(20 * kMiB);
  TorchAllocator a(o);
  a.Free(Alloc(a, 30 * kMiB).handle);
  a.Free(Alloc(a, 50 * kMiB).handle);
  testing::EventLog log;
  a.set_observer(&log);
  // 12 MiB may not take an oversize block; 80 + 12 > 85; the smallest cached
  // block >= max(12, 20) MiB is the 30 MiB one.
  EXPECT_EQ(Alloc(a, 12 * kMiB).offset, Offset(80 * kMiB));
  EXPECT_EQ(log.lines,
            (std::vector<std::string>{"region_released 0 31457280 0", "region_added 83886080 12582912 0"}));
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 0);
}

TEST(TorchEdges, ExpandableBlocksAreSkippedWhenTheOptionIsOff) {
  TorchAllocator a({});
  SegmentSeed s;
  s.base = Offset(1ull << 40);
  s.size = Bytes(40 * kMiB);
  s.expandable = true;
  s.blocks = {{Bytes(30 * kMiB), Bytes(30 * kMiB), BlockState::kInUse, BufferId(1)},
              {Bytes(10 * kMiB), Bytes(), BlockState::kFree, BufferId()}};
  ASSERT_TRUE(a.SeedSegment(s).ok());
  EXPECT_EQ(Alloc(a, 5 * kMiB).offset, Offset(0));  // a new cudaMalloc segment
  EXPECT_EQ(Counter(a, "segment.all.current"), 1);
}

TEST(TorchEdges, GcThresholdWithoutAFractionDoesNothing) {
  TorchOptions o;
  o.capacity = Bytes(100 * kMiB);
  o.garbage_collection_threshold = 0.5;
  TorchAllocator a(o);
  a.Free(Alloc(a, 30 * kMiB).handle);
  a.Free(Alloc(a, 40 * kMiB).handle);
  ASSERT_TRUE(Alloc(a, 50 * kMiB).ok());
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);  // the full flush, not GC, made room
  EXPECT_EQ(Counter(a, "num_device_free"), 2);
}

TEST(TorchEdges, LargestSatisfiableRequestRespectsPoolsAndSegmentSizes) {
  TorchOptions o;
  o.capacity = Bytes(30 * kMiB);
  TorchAllocator a(o);
  EXPECT_EQ(Alloc(a, 19 * kMiB).size, Bytes(20 * kMiB));  // unsplit: 1 MiB would remain
  Alloc(a, 1024);                                         // small segment: 2 MiB − 1 KiB free
  // 8 MiB of headroom holds no 20 MiB segment; the small block serves <= 1 MiB.
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, static_cast<int64_t>(kMiB));
  EXPECT_TRUE(Alloc(a, kMiB).ok());
  EXPECT_FALSE(Alloc(a, kMiB + 1).ok());
}

}  // namespace
}  // namespace hbmsim::allocator::torch
