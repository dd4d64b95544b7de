// Compaction around blocks that cannot move, the memory-map walk, and the
// stats fields, with exact addresses.
#include <map>
#include <vector>

#include "allocator/tpu/hbm_layout.h"
#include "allocator/tpu/tpu_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(TpuLayoutTest, CompactionCarriesBuffersOverAProgramThatStays) {
  TpuAllocator a(Options(8 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(2 * kMiB), EventIndex(0)).ok);  // [0,2M)
  ASSERT_TRUE(a.LoadProgram(ProgramId(2), Bytes(kMiB), EventIndex(1)).ok);      // [2M,3M)
  std::vector<Handle> h;
  for (uint64_t id = 1; id <= 5; ++id) h.push_back(Alloc(a, id, kMiB).handle);  // 7M..3M
  a.UnloadProgram(ProgramId(1));
  ASSERT_EQ(Alloc(a, 6, kMiB).offset.value(), kMiB);  // below program 2
  a.Free(h[1]);                                       // [6M,7M)
  a.Free(h[3]);                                       // [4M,5M)
  // Free: [0,1M), [4M,5M), [6M,7M). Compaction lifts 3 and 5, and 6 over program 2.
  const AllocResult r = Alloc(a, 7, 2 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().buffers_moved, 3);
  EXPECT_EQ(a.counters().bytes_moved, int64_t{3 * kMiB});
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{
                                  {1, 7 * kMiB}, {3, 6 * kMiB}, {5, 5 * kMiB}, {6, 4 * kMiB}, {7, 0}}));
  EXPECT_EQ(a.ResidentPrograms().at(0).offset.value(), 2 * kMiB);
  EXPECT_EQ(CounterValue(a, "largest_contiguous_free_block_bytes"), int64_t{kMiB});  // [3M,4M)
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLayoutTest, CompactionLeavesAStillQueuedFreeInPlace) {
  TpuOptions o = Options(6 * kMiB);
  o.queued_free_retry = false;
  TpuAllocator a(o);
  std::vector<Handle> h;
  for (uint64_t id = 1; id <= 6; ++id) h.push_back(Alloc(a, id, kMiB).handle);  // 5M..0
  a.Free(h[1]);                                                                 // [4M,5M)
  a.RequestFree(h[3]);  // [2M,3M) stays held: the device may still read it
  a.Free(h[5]);         // [0,1M)
  const AllocResult r = Alloc(a, 7, 2 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().buffers_moved, 2);
  EXPECT_EQ(a.counters().queued_free_waits, 0);
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{
                                  {1, 5 * kMiB}, {3, 4 * kMiB}, {4, 2 * kMiB}, {5, 3 * kMiB}, {7, 0}}));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

class MapRecorder : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    lines.push_back(fmt::format("region {} {} {}", r.base.value(), r.size.value(), r.index));
  }
  void OnBlock(const BlockInfo& b) override {
    lines.push_back(fmt::format("{} {} {} {} id={}", b.offset.value(), b.size.value(),
                                BlockStateName(b.state), b.requested.value(), b.id));
  }
  std::vector<std::string> lines;
};

TEST(TpuLayoutTest, MemoryMapShowsProgramsBuffersAndQueuedFrees) {
  TpuAllocator a(Options(4 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(9), Bytes(kMiB), EventIndex(0)).ok);
  ASSERT_TRUE(Alloc(a, 1, 1000).ok());
  a.RequestFree(Alloc(a, 2, 2048).handle);
  MapRecorder map;
  a.WalkMemoryMap(map);
  EXPECT_EQ(map.lines, (std::vector<std::string>{
                           "region 0 4194304 0",
                           "0 1048576 program 1048576 id=9",
                           "1048576 3142656 free 0 id=0",
                           "4191232 2048 pending_free 2048 id=2",
                           "4193280 1024 in_use 1000 id=1",
                       }));
}

TEST(TpuLayoutTest, StatsFollowTheAllocationHistory) {
  TpuAllocator a(Options(4 * kMiB));
  const AllocResult big = Alloc(a, 1, 3 * kMiB);
  ASSERT_TRUE(Alloc(a, 2, 1000).ok());
  a.Free(big.handle);
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(kMiB), EventIndex(3)).ok);
  const AllocatorStats s = a.GetStats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.peak_bytes_in_use, int64_t{3 * kMiB + 1024});
  EXPECT_EQ(s.largest_alloc_size, int64_t{3 * kMiB});
  EXPECT_EQ(s.bytes_limit, int64_t{4 * kMiB});
  // The program did not fit under the small buffer at 1M-1K: it sits at [1M,2M).
  EXPECT_EQ(a.ResidentPrograms().at(0).offset.value(), kMiB);
  EXPECT_EQ(s.bytes_reserved, int64_t{kMiB});
  EXPECT_EQ(s.bytes_reservable_limit, int64_t{3 * kMiB});  // 1M reserved + [2M,4M)
  // The program was never run, so the ladder may evict it and compact.
  EXPECT_EQ(s.largest_free_block_bytes, int64_t{4 * kMiB - 1024});
  EXPECT_EQ(CounterValue(a, "largest_contiguous_free_block_bytes"), int64_t{2 * kMiB});
  EXPECT_FALSE(s.pool_bytes.has_value());
}

TEST(TpuLayoutTest, LimitIsRoundedDownToWholeGranules) {
  TpuAllocator a(Options(10000));
  EXPECT_EQ(a.GetStats().bytes_limit, 9728);
  EXPECT_EQ(Alloc(a, 1, 1).offset.value(), 9216u);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLayoutTest, ValidationNamesTheOption) {
  TpuOptions o = Options(kMiB);
  EXPECT_TRUE(ValidateTpuOptions(o).ok());
  o.granule = Bytes(0);
  EXPECT_EQ(ValidateTpuOptions(o).message(), "granule must be at least 1 byte");
  o = Options(256);
  EXPECT_EQ(ValidateTpuOptions(o).message(), "hbm_bytes (256) must hold at least one granule (512)");
  EXPECT_EQ(ParseEvictionOrder("largest_first"), EvictionOrder::kLargestFirst);
  EXPECT_EQ(ParseEvictionOrder("lru"), EvictionOrder::kLru);
  EXPECT_EQ(ParseEvictionOrder("fifo"), std::nullopt);
  EXPECT_EQ(EvictionOrderName(EvictionOrder::kLargestFirst), "largest_first");
}

TEST(HbmLayoutTest, ReleaseCoalescesBothWaysAndCheckCatchesNothingWrong) {
  HbmLayout layout(Bytes(4096));
  const HbmLayout::Ref a = *layout.PlaceBestFitTop(Bytes(1024), BlockState::kInUse, 1);        // [3072,4096)
  const HbmLayout::Ref b = *layout.PlaceBestFitTop(Bytes(1024), BlockState::kInUse, 2);        // [2048,3072)
  const HbmLayout::Ref c = *layout.PlaceFirstFitBottom(Bytes(1024), BlockState::kProgram, 3);  // [0,1024)
  EXPECT_EQ(layout.block(a).offset, 3072u);
  EXPECT_EQ(layout.block(b).offset, 2048u);
  EXPECT_EQ(layout.block(c).offset, 0u);
  EXPECT_EQ(layout.free_bytes().value(), 1024u);
  EXPECT_FALSE(layout.PlaceBestFitTop(Bytes(2048), BlockState::kInUse, 4).has_value());
  layout.Release(b);  // merges with [1024,2048)
  EXPECT_EQ(layout.largest_free_block().value(), 2048u);
  layout.Release(c);  // merges with [1024,3072)
  EXPECT_EQ(layout.largest_free_block().value(), 3072u);
  EXPECT_EQ(layout.block_count(), 2u);
  EXPECT_TRUE(layout.Check().ok());
}

// Compact carries out exactly the plan PlanCompaction makes (in-use blocks
// movable, programs and queued frees fixed), keeps the layout's invariants,
// and a second Compact finds nothing to move and changes nothing.
TEST(HbmLayoutTest, CompactDoesWhatPlanCompactionPlans) {
  HbmLayout layout(Bytes(64 * 1024));
  ASSERT_TRUE(layout.PlaceFirstFitBottom(Bytes(4096), BlockState::kProgram, 100).has_value());
  std::vector<HbmLayout::Ref> refs;
  for (uint64_t i = 0; i < 24; ++i) {
    const BlockState state = i % 5 == 2 ? BlockState::kPendingFree : BlockState::kInUse;
    refs.push_back(*layout.PlaceBestFitTop(Bytes(1024 * (1 + i % 3)), state, i + 1));
  }
  for (size_t i = 0; i < refs.size(); i += 4) layout.Release(refs[i]);  // holes (all in-use ones)
  std::map<HbmLayout::Ref, uint64_t> before;
  for (size_t i = 1; i < refs.size(); ++i) {
    if (i % 4 != 0) before[refs[i]] = layout.block(refs[i]).offset;
  }
  const auto role_of = [](const HbmLayout::Block& b) {
    if (b.state == BlockState::kFree) return HbmLayout::Role::kFree;
    return b.state == BlockState::kInUse ? HbmLayout::Role::kMovable : HbmLayout::Role::kFixed;
  };
  std::map<HbmLayout::Ref, uint64_t> planned;
  int64_t planned_moves = 0;
  const Bytes planned_largest =
      layout.PlanCompaction(role_of, [&](HbmLayout::Ref r, uint64_t to, const HbmLayout::Block& b) {
        planned[r] = to;
        planned_moves += b.offset != to ? 1 : 0;
      });
  const HbmLayout::Compaction done = layout.Compact();
  EXPECT_GT(done.blocks_moved, 0);
  EXPECT_EQ(done.blocks_moved, planned_moves);
  for (const auto& [r, offset] : before) {
    const auto it = planned.find(r);
    EXPECT_EQ(layout.block(r).offset, it != planned.end() ? it->second : offset) << "owner " << layout.block(r).owner;
  }
  EXPECT_EQ(layout.largest_free_block(), planned_largest);
  ASSERT_TRUE(layout.Check().ok()) << layout.Check();
  const size_t blocks = layout.block_count();
  const Bytes largest = layout.largest_free_block();
  EXPECT_EQ(layout.Compact().blocks_moved, 0);
  EXPECT_EQ(layout.block_count(), blocks);
  EXPECT_EQ(layout.largest_free_block(), largest);
  EXPECT_TRUE(layout.Check().ok());
  // The spare slots are reused: placing into the rebuilt layout grows nothing.
  EXPECT_TRUE(layout.PlaceBestFitTop(Bytes(512), BlockState::kInUse, 99).has_value());
  EXPECT_TRUE(layout.Check().ok());
}

}  // namespace
}  // namespace hbmsim::testing
