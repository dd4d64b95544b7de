// The backward walk from the final segments to the state at the start of a
// trace. Expected numbers come from an independent python walk over the same
// files (and, for the expandable file, from final reserved - mapped + unmapped).
#include "trace/torch/initial_state.h"

#include <string>

#include "gtest/gtest.h"
#include "trace/torch/snapshot.h"

namespace hbmsim {
namespace {

const std::string kSnapshots = std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/";

Snapshot MustLoad(const char* name) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSnapshots + name);
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
  // Blocks freed in the trace come back at their request rounded to 512.
  EXPECT_EQ(LiveBytes(s), Bytes(5097533440));
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
