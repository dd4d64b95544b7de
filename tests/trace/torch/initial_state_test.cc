// The backward walk from the final segments to the state at the start of a
// trace. Expected numbers come from an independent python walk over the same
// files (and, for the expandable file, from final reserved - mapped + unmapped).
#include "trace/torch/initial_state.h"

#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "trace/torch/snapshot.h"

namespace hbmsim {
namespace {

Snapshot MustLoad(const char* name) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + name);
  EXPECT_TRUE(snap.ok()) << snap.status();
  return snap.ok() ? *std::move(snap) : Snapshot();
}

Bytes Reserved(const InitialState& s) {
  Bytes total;
  for (const InitialSegment& seg : s.segments) total += seg.total_size;
  return total;
}

Bytes LiveBytes(const InitialState& s) {
  Bytes total;
  for (const InitialSegment& seg : s.segments) {
    for (const InitialBlock& b : seg.blocks) {
      if (b.live) total += b.size;
    }
  }
  return total;
}

TEST(InitialStateTest, SmallTraceStartsFromAnEmptyAllocator) {
  const InitialState s = RebuildInitialState(MustLoad("small_trace_from_empty.pickle"), DeviceId(0));
  EXPECT_TRUE(s.segments.empty());
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.issue_count, 0u);
  EXPECT_TRUE(s.issues.empty());
}

TEST(InitialStateTest, SegmentFreeBurstTargetsAreWholeFreeSegments) {
  const InitialState s =
      RebuildInitialState(MustLoad("cs336_ctx256_forward_segment_free_burst.pickle"), DeviceId(0));
  EXPECT_EQ(s.issue_count, 0u) << (s.issues.empty() ? "" : s.issues[0]);
  // 700 final - 471 segment_alloc + 287 segment_free.
  EXPECT_EQ(s.segments.size(), 516u);
  EXPECT_EQ(Reserved(s), Bytes(19667091456));
  EXPECT_EQ(s.live_blocks, 325u);
  EXPECT_EQ(s.live_blocks_freed_in_trace, 0u);
  EXPECT_EQ(LiveBytes(s), Bytes(13798361088));
  size_t freed = 0;
  for (const InitialSegment& seg : s.segments) {
    if (seg.in_final_state) continue;
    ++freed;
    ASSERT_EQ(seg.blocks.size(), 1u) << seg.address.value();
    EXPECT_FALSE(seg.blocks[0].live);
    EXPECT_EQ(seg.blocks[0].size, seg.total_size);
  }
  EXPECT_EQ(freed, 287u);
}

TEST(InitialStateTest, MidRunTraceBringsBackBlocksFreedDuringIt) {
  const InitialState s = RebuildInitialState(MustLoad("gen5_medium_512_training.pickle"), DeviceId(0));
  EXPECT_EQ(s.issue_count, 0u) << (s.issues.empty() ? "" : s.issues[0]);
  EXPECT_EQ(s.segments.size(), 399u);
  EXPECT_EQ(Reserved(s), Bytes(12593397760));
  EXPECT_EQ(s.live_blocks, 664u);
  EXPECT_EQ(s.live_blocks_freed_in_trace, 438u);
  // Blocks freed in the trace come back at their request rounded to 512
  // (5097533440 bytes in all), and 2949120 more: the unsplit remainders the
  // trace's allocs show 3 of them held (960 KiB each).
  EXPECT_EQ(LiveBytes(s), Bytes(5097533440 + 2949120));
  EXPECT_EQ(s.remainders_claimed, 3u);
  // The one the replay needs first: the 8 MiB alloc at device_traces[0][179]
  // lands at 0x8dfa00000, so the 4 MiB block before it held 960 KiB more and
  // the free block there was 20 MiB (a best fit, as the 20 MiB segment at
  // 0x8f9800000 is, and lower), not 20.9 MiB.
  const InitialBlock* held = nullptr;
  for (const InitialSegment& seg : s.segments) {
    for (size_t i = 0; i + 1 < seg.blocks.size(); ++i) {
      if (seg.blocks[i].address == Offset(0x8df510000)) held = &seg.blocks[i];
    }
  }
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->live);
  EXPECT_FALSE(held->size_known);
  EXPECT_EQ(held->requested_size, Bytes(4194304));
  EXPECT_EQ(held->size, Bytes(4194304 + 983040));
  EXPECT_FALSE(held[1].live);
  EXPECT_EQ(held[1].address, Offset(0x8dfa00000));
  EXPECT_EQ(held[1].size, Bytes(20971520));
  // Every segment is tiled exactly by its blocks.
  for (const InitialSegment& seg : s.segments) {
    Offset next = seg.address;
    for (const InitialBlock& b : seg.blocks) {
      ASSERT_EQ(b.address, next);
      next = b.address + b.size;
    }
    ASSERT_EQ(next - seg.address, seg.total_size);
  }
}

TEST(InitialStateTest, OtherRealTracesWalkBackCleanly) {
  struct Case {
    const char* file;
    size_t segments;
    uint64_t reserved, live, freed_in_trace;
  } kCases[] = {
      {"cs336_ctx128_forward.pickle", 227, 13763608576, 324, 0},
      {"cs336_ctx128_fullstep.pickle", 227, 13763608576, 324, 0},
      {"gen5_user_metadata_compile_context.pickle", 96, 4238344192, 447, 222},
      {"gen2_no_time_us.pickle", 63, 1400897536, 622, 0},
      {"segment_alloc_free_churn_4dev.pickle", 4, 230686720, 5, 1},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.file);
    const InitialState s = RebuildInitialState(MustLoad(c.file), DeviceId(0));
    EXPECT_EQ(s.issue_count, 0u) << (s.issues.empty() ? "" : s.issues[0]);
    EXPECT_EQ(s.segments.size(), c.segments);
    EXPECT_EQ(Reserved(s), Bytes(c.reserved));
    EXPECT_EQ(s.live_blocks, c.live);
    EXPECT_EQ(s.live_blocks_freed_in_trace, c.freed_in_trace);
  }
}

TEST(InitialStateTest, ExpandableSegmentsUnmapBackToEmpty) {
  // On each device, final reserved - mapped + unmapped bytes = 0.
  const Snapshot snap = MustLoad("h100x4_expandable_segments_oom.pickle");
  for (uint64_t dev = 0; dev < 3; ++dev) {
    SCOPED_TRACE(dev);
    const InitialState s = RebuildInitialState(snap, DeviceId(dev));
    EXPECT_EQ(s.issue_count, 0u) << (s.issues.empty() ? "" : s.issues[0]);
    EXPECT_TRUE(s.segments.empty());
    EXPECT_EQ(s.live_blocks, 0u);
  }
}

TraceEntry Entry(TraceAction a, uint64_t addr, uint64_t size) {
  TraceEntry e;
  e.action = a;
  e.addr = Offset(addr);
  e.size = Bytes(size);
  return e;
}

// One segment at kBase, free at the end of a trace that opens with a block
// of `held` bytes live at kBase (freed in the trace, so its size is only
// estimated) and places `bytes` at kBase + `at`, freeing both in `order`.
constexpr uint64_t kBase = 0x10000000;
constexpr uint64_t kMiB = uint64_t{1} << 20;
enum class Order { kOwnerFreedLast, kOwnerFreedFirst };

InitialState StartOf(uint64_t segment, bool small, bool expandable, uint64_t held, uint64_t at, uint64_t bytes,
                     Order order, int64_t max_split_size) {
  Snapshot snap;
  if (max_split_size != 0) {
    snap.allocator_settings.emplace();
    snap.allocator_settings->max_split_size = max_split_size;
  }
  SnapshotSegment seg;
  seg.address = Offset(kBase);
  seg.total_size = Bytes(segment);
  seg.type = small ? SegmentType::kSmall : SegmentType::kLarge;
  seg.is_expandable = expandable;
  seg.blocks.push_back(SnapshotBlock{Offset(kBase), Bytes(segment), Bytes(0), BlockState::kFree, {}, 0});
  snap.segments.push_back(seg);
  snap.device_traces.resize(1);
  const std::vector<TraceEntry> free_owner = {Entry(TraceAction::kFreeRequested, kBase, held),
                                              Entry(TraceAction::kFreeCompleted, kBase, held)};
  const std::vector<TraceEntry> alloc = {Entry(TraceAction::kAlloc, kBase + at, bytes)};
  const std::vector<TraceEntry> free_alloc = {Entry(TraceAction::kFreeRequested, kBase + at, bytes),
                                              Entry(TraceAction::kFreeCompleted, kBase + at, bytes)};
  std::vector<TraceEntry>& entries = snap.device_traces[0].entries;
  for (const auto* part : order == Order::kOwnerFreedLast ? std::vector{&alloc, &free_alloc, &free_owner}
                                                         : std::vector{&free_owner, &alloc, &free_alloc}) {
    entries.insert(entries.end(), part->begin(), part->end());
  }
  return RebuildInitialState(snap, DeviceId(0));
}

// The first alloc into the free space after a block of estimated size
// says how much of that space the block held: PyTorch leaves a remainder of
// at most 1 MiB unsplit in a large segment (any amount after a block of at
// least max_split_size, which it never splits), and nowhere else.
TEST(InitialStateTest, TheFirstAllocAfterABlockShowsTheRemainderItHeld) {
  struct Case {
    const char* what;
    uint64_t segment;
    bool small, expandable;
    uint64_t held, at;
    Order order;
    uint64_t owner_size;         // expected, at the start
    int64_t max_split_size = 0;  // recorded in allocator_settings (0: no settings)
  } kCases[] = {
      {"960 KiB held", 20 * kMiB, false, false, 4 * kMiB, 4 * kMiB + 983040, Order::kOwnerFreedLast,
       4 * kMiB + 983040},
      {"exactly 1 MiB held", 20 * kMiB, false, false, 4 * kMiB, 5 * kMiB, Order::kOwnerFreedLast, 5 * kMiB},
      {"right after it: nothing held", 20 * kMiB, false, false, 4 * kMiB, 4 * kMiB, Order::kOwnerFreedLast,
       4 * kMiB},
      {"more than 1 MiB would have been split off", 20 * kMiB, false, false, 4 * kMiB, 5 * kMiB + 512,
       Order::kOwnerFreedLast, 4 * kMiB},
      {"the owner freed first: merged either way", 20 * kMiB, false, false, 4 * kMiB, 4 * kMiB + 983040,
       Order::kOwnerFreedFirst, 4 * kMiB},
      {"a small segment splits off any 512 bytes", 2 * kMiB, true, false, 512 * 1024, 512 * 1024 + 512,
       Order::kOwnerFreedLast, 512 * 1024},
      {"an expandable segment splits off any 512 bytes", 20 * kMiB, false, true, 4 * kMiB, 4 * kMiB + 983040,
       Order::kOwnerFreedLast, 4 * kMiB},
      {"max_split_size unlimited: 1 MiB at most", 20 * kMiB, false, false, 4 * kMiB, 6 * kMiB,
       Order::kOwnerFreedLast, 4 * kMiB, -1},
      {"below max_split_size: 1 MiB at most", 40 * kMiB, false, false, 4 * kMiB, 6 * kMiB, Order::kOwnerFreedLast,
       4 * kMiB, 8 * kMiB},
      {"at max_split_size: never split", 40 * kMiB, false, false, 8 * kMiB, 14 * kMiB, Order::kOwnerFreedLast,
       14 * kMiB, 8 * kMiB},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.what);
    const InitialState s =
        StartOf(c.segment, c.small, c.expandable, c.held, c.at, 2 * kMiB, c.order, c.max_split_size);
    EXPECT_EQ(s.issue_count, 0u) << (s.issues.empty() ? "" : s.issues[0]);
    ASSERT_EQ(s.segments.size(), 1u);
    const std::vector<InitialBlock>& blocks = s.segments[0].blocks;
    ASSERT_EQ(blocks.size(), 2u);
    EXPECT_TRUE(blocks[0].live);
    EXPECT_FALSE(blocks[0].size_known);
    EXPECT_EQ(blocks[0].size, Bytes(c.owner_size));
    EXPECT_FALSE(blocks[1].live);
    EXPECT_EQ(blocks[1].address, Offset(kBase + c.owner_size));
    EXPECT_EQ(blocks[1].size, Bytes(c.segment - c.owner_size));
    EXPECT_EQ(s.remainders_claimed, c.owner_size != c.held ? 1u : 0u);
  }
}

TEST(InitialStateTest, ReportsWhatCannotBeUndone) {
  Snapshot snap;
  SnapshotSegment seg;
  seg.address = Offset(0x1000);
  seg.total_size = Bytes(4096);
  seg.blocks.push_back(SnapshotBlock{Offset(0x1000), Bytes(4096), Bytes(0), BlockState::kFree, {}, 0});
  snap.segments.push_back(seg);
  snap.device_traces.resize(1);
  auto entry = [](TraceAction a, uint64_t addr, uint64_t size) {
    TraceEntry e;
    e.action = a;
    e.addr = Offset(addr);
    e.size = Bytes(size);
    return e;
  };
  snap.device_traces[0].entries = {
      entry(TraceAction::kSegmentAlloc, 0x1000, 4096),
      entry(TraceAction::kAlloc, 0x1000, 100),          // never freed, yet inactive at the end
      entry(TraceAction::kFreeCompleted, 0x9000, 512),  // outside every segment
  };
  const InitialState s = RebuildInitialState(snap, DeviceId(0));
  ASSERT_EQ(s.issues.size(), 3u);
  EXPECT_EQ(s.issues[0], "device_traces[0][2]: free_completed at 0x9000: outside every segment");
  EXPECT_EQ(s.issues[1], "device_traces[0][1]: alloc at 0x1000: no live block there to un-allocate");
  EXPECT_EQ(s.issues[2], "initial state: live block at 0x9000 is outside every segment");
  EXPECT_EQ(s.issue_count, 3u);
  EXPECT_TRUE(s.segments.empty());
}

}  // namespace
}  // namespace hbmsim
