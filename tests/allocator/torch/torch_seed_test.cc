// SeedSegment: the state at the start of a trace.
#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::EventLog;
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

// 1 GiB device: a VA range is ceil(1.125 × 1024 / 20) = 58 pages of 20 MiB = 1160 MiB.
TorchOptions Expandable1GiB() {
  TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(1024 * kMiB);
  return o;
}

// One mapped run of 100 MiB: [A 40 in use][F1 20 free][B 30 in use][F2 10 free].
SegmentSeed HundredMiBRun() {
  SegmentSeed s;
  s.base = Offset(kBase);
  s.size = Bytes(100 * kMiB);
  s.expandable = true;
  s.blocks = {{Bytes(40 * kMiB), Bytes(40 * kMiB), BlockState::kInUse, BufferId(1)},
              {Bytes(20 * kMiB), Bytes(), BlockState::kFree, BufferId()},
              {Bytes(30 * kMiB), Bytes(30 * kMiB), BlockState::kInUse, BufferId(2)},
              {Bytes(10 * kMiB), Bytes(), BlockState::kFree, BufferId()}};
  return s;
}

TEST(TorchSeed, ExpandableRunGetsTheRestOfItsRangeUnmapped) {
  TorchAllocator a(Expandable1GiB());
  ASSERT_TRUE(a.SeedSegment(HundredMiBRun()).ok());
  EXPECT_EQ(Map(a),
            fmt::format("region {0} {1}\n  {0} {2} in_use\n  {3} {4} free\n  {5} {6} in_use\n"
                        "  {7} {8} free\n  {9} {10} unmapped\n",
                        kBase, 1160 * kMiB, 40 * kMiB, kBase + 40 * kMiB, 20 * kMiB, kBase + 60 * kMiB,
                        30 * kMiB, kBase + 90 * kMiB, 10 * kMiB, kBase + 100 * kMiB, 1060 * kMiB));
  EXPECT_EQ(Counter(a, "segment.all.current"), 0);  // mappings are not segments
  EXPECT_EQ(Counter(a, "reserved_bytes.large_pool.current"), 100 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split.all.current"), 0);
  // get_free_block: lower_bound(8 MiB) is F2 (10 MiB), whose expandable size is
  // 10 + 1060 MiB; F1's is 20 MiB, smaller, so the walk moves on to F1. (Without
  // the tail F2 would win: 20 MiB is not below 10.) bolong_xl_fwd_cl2048 event 384.
  EXPECT_EQ(Alloc(a, 8 * kMiB).offset, Offset(kBase + 40 * kMiB));
  // 30 MiB fits no free block (F1's rest is 12 MiB, F2 10 MiB): the lowest
  // unmapped block is the tail, its free predecessor F2 starts the run, and one
  // 20 MiB page is mapped behind F2. The range grows in place.
  EventLog events;
  a.set_observer(&events);
  EXPECT_EQ(Alloc(a, 30 * kMiB, 0, kBase + 4096 * kMiB).offset, Offset(kBase + 90 * kMiB));
  EXPECT_EQ(events.lines,
            std::vector<std::string>{fmt::format("region_extended {} {} 1", kBase + 100 * kMiB, 20 * kMiB)});
  EXPECT_EQ(Counter(a, "reserved_bytes.large_pool.current"), 120 * kMiB);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchSeed, LaterRunsOfTheSameRangeFillItsHoleOthersTrimIt) {
  TorchAllocator a(Expandable1GiB());
  SegmentSeed first;
  first.base = Offset(kBase);
  first.size = Bytes(40 * kMiB);
  first.expandable = true;
  first.blocks = {{Bytes(40 * kMiB), Bytes(40 * kMiB), BlockState::kInUse, BufferId(1)}};
  SegmentSeed second = first;
  second.base = Offset(kBase + 100 * kMiB);
  second.size = Bytes(20 * kMiB);
  second.blocks = {{Bytes(20 * kMiB), Bytes(), BlockState::kFree, BufferId()}};
  SegmentSeed small = first;  // the small pool's range, 2 MiB pages
  small.base = Offset(kBase + 200 * kMiB);
  small.size = Bytes(2 * kMiB);
  small.small_pool = true;
  small.blocks = {{Bytes(512), Bytes(100), BlockState::kInUse, BufferId(2)},
                  {Bytes(2 * kMiB - 512), Bytes(), BlockState::kFree, BufferId()}};
  ASSERT_TRUE(a.SeedSegment(first).ok());
  ASSERT_TRUE(a.SeedSegment(second).ok());
  ASSERT_TRUE(a.SeedSegment(small).ok());
  // The large range ends where the small one begins; the small range's tail
  // is 1.125 GiB of 2 MiB pages (1152 MiB) less its mapped page.
  EXPECT_EQ(Map(a),
            fmt::format("region {0} {1}\n  {0} {2} in_use\n  {3} {4} unmapped\n  {5} {6} free\n"
                        "  {7} {8} unmapped\n"
                        "region {9} {10}\n  {9} 512 in_use\n  {11} {12} free\n  {13} {14} unmapped\n",
                        kBase, 200 * kMiB, 40 * kMiB, kBase + 40 * kMiB, 60 * kMiB, kBase + 100 * kMiB,
                        20 * kMiB, kBase + 120 * kMiB, 80 * kMiB, kBase + 200 * kMiB, 1152 * kMiB,
                        kBase + 200 * kMiB + 512, 2 * kMiB - 512, kBase + 202 * kMiB, 1150 * kMiB));
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 62 * kMiB);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
  // 70 MiB: no free block fits; find_expandable_block takes the lowest unmapped
  // block whose run holds it: the hole at +40 (60 MiB) with the free run behind
  // it (20 MiB). Its 3 pages are mapped and merge with that free block.
  EXPECT_EQ(Alloc(a, 70 * kMiB).offset, Offset(kBase + 40 * kMiB));
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 122 * kMiB);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

}  // namespace
}  // namespace hbmsim::allocator::torch
