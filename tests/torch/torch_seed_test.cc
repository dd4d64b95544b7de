// SeedSegment: the state at the start of a trace.
#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/torch/torch_test_util.h"

namespace hbmsim::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::kMiB;
using testing::Map;

constexpr uint64_t kBase = 0x7f0000000000;

SegmentSeed ThreeBlockSeed() {
  SegmentSeed s;
  s.base = Offset(kBase);
  s.size = Bytes(20 * kMiB);
  s.blocks = {{Bytes(8 * kMiB), Bytes(8000000), BlockState::kInUse, BufferId(1)},
              {Bytes(4 * kMiB), Bytes(), BlockState::kFree, BufferId()},
              {Bytes(8 * kMiB), Bytes(8 * kMiB), BlockState::kPendingFree, BufferId(2)}};
  return s;
}

TEST(TorchSeed, LiveBlocksGetHandlesAndStatsCountThem) {
  TorchAllocator a({});
  auto handles = a.SeedSegment(ThreeBlockSeed());
  ASSERT_TRUE(handles.ok()) << handles.status();
  ASSERT_EQ(handles->size(), 2u);
  EXPECT_EQ(Map(a),
            "region 139637976727552 20971520\n  139637976727552 8388608 in_use\n"
            "  139637985116160 4194304 free\n  139637989310464 8388608 pending_free\n");
  EXPECT_EQ(Counter(a, "segment.large_pool.current"), 1);
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 20 * kMiB);
  EXPECT_EQ(Counter(a, "allocated_bytes.all.current"), 8 * kMiB);
  EXPECT_EQ(Counter(a, "active_bytes.all.current"), 16 * kMiB);
  EXPECT_EQ(Counter(a, "requested_bytes.all.current"), 8000000 + 8 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.all.current"), 4 * kMiB);
  EXPECT_EQ(Counter(a, "num_device_alloc"), 0);  // it predates the trace
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
  // The seeded free block serves the next fitting request; no new segment.
  EXPECT_EQ(Alloc(a, 4 * kMiB).offset, Offset(kBase + 8 * kMiB));
  a.CompleteFree((*handles)[1]);
  a.Free((*handles)[0]);
  EXPECT_EQ(Counter(a, "active_bytes.all.current"), 4 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split.all.current"), 2);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchSeed, TwoMebibyteSegmentsAreSmallPoolUnlessToldOtherwise) {
  TorchAllocator a({});
  SegmentSeed s;
  s.base = Offset(kBase);
  s.size = Bytes(2 * kMiB);
  s.blocks = {{Bytes(512), Bytes(4), BlockState::kInUse, BufferId(7)},
              {Bytes(2 * kMiB - 512), Bytes(), BlockState::kFree, BufferId()}};
  ASSERT_TRUE(a.SeedSegment(s).ok());
  EXPECT_EQ(Counter(a, "segment.small_pool.current"), 1);
  EXPECT_EQ(Alloc(a, 100).offset, Offset(kBase + 512));
  s.base = Offset(kBase + 2 * kMiB);
  s.small_pool = false;  // the snapshot said "large"
  ASSERT_TRUE(a.SeedSegment(s).ok());
  EXPECT_EQ(Counter(a, "segment.large_pool.current"), 1);
}

TEST(TorchSeed, RejectsSeedsPyTorchCouldNotHaveProduced) {
  TorchAllocator a({});
  SegmentSeed s = ThreeBlockSeed();
  s.size = Bytes(2 * kMiB);
  EXPECT_EQ(a.SeedSegment(s).status().message(),
            "seeded segment at 139637976727552: blocks sum to 20971520 bytes, not the segment's 2097152");
  s = ThreeBlockSeed();
  s.blocks[2].state = BlockState::kFree;
  EXPECT_EQ(
      a.SeedSegment(s).status().message(),
      "seeded segment at 139637976727552: blocks 1 and 2 are both free (PyTorch would have merged them)");
  ASSERT_TRUE(a.SeedSegment(ThreeBlockSeed()).ok());
  s = ThreeBlockSeed();
  s.base = Offset(kBase + kMiB);
  EXPECT_EQ(a.SeedSegment(s).status().message(),
            "seeded segment at 139637977776128: overlaps a segment already held");
  s.blocks.clear();
  EXPECT_EQ(a.SeedSegment(s).status().message(), "seeded segment at 139637977776128: no blocks");
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TorchSeed, ExpandableRangesAreExactlyTheirMappedBytes) {
  TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(1024 * kMiB);
  TorchAllocator a(o);
  SegmentSeed s;
  s.base = Offset(kBase);
  s.size = Bytes(40 * kMiB);
  s.expandable = true;
  s.blocks = {{Bytes(30 * kMiB), Bytes(30 * kMiB), BlockState::kInUse, BufferId(1)},
              {Bytes(10 * kMiB), Bytes(), BlockState::kFree, BufferId()}};
  ASSERT_TRUE(a.SeedSegment(s).ok());
  EXPECT_EQ(Counter(a, "segment.all.current"), 0);  // mappings are not segments
  EXPECT_EQ(Counter(a, "reserved_bytes.large_pool.current"), 40 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split.all.current"), 0);
  EXPECT_EQ(Alloc(a, 5 * kMiB).offset, Offset(kBase + 30 * kMiB));
  // Growth past the range needs a new one (at the recorded address here).
  EXPECT_EQ(Alloc(a, 20 * kMiB, 0, kBase + 40 * kMiB).offset, Offset(kBase + 40 * kMiB));
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

}  // namespace
}  // namespace hbmsim::torch
