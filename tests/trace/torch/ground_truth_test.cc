// Every real snapshot in shared/torch_snapshots against MANIFEST.md's
// ground-truth table (computed there from the final `segments`) and its
// trace entry counts by action.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_summary.h"

namespace hbmsim {
namespace {

struct Expected {
  const char* file;
  int generation;
  std::vector<uint64_t> devices;
  uint64_t segments, small, large;
  uint64_t reserved, active_allocated, requested, inactive, largest_inactive;
  std::map<std::string, uint64_t> actions;
};

// MANIFEST.md "Ground-truth summary of the final segments state", verbatim;
// generations from its per-file table.
const Expected kTable[] = {
    {"cs336_ctx128_forward.pickle",
     4,
     {0},
     516,
     10,
     506,
     19667091456,
     19498420224,
     19352504320,
     168671232,
     4194304,
     {{"segment_alloc", 289}, {"alloc", 2058}, {"free_requested", 1155}, {"free_completed", 1155}}},
    {"cs336_ctx128_fullstep.pickle",
     4,
     {0},
     1010,
     10,
     1000,
     61111009280,
     54873829888,
     54597857284,
     6237179392,
     104857600,
     {{"segment_alloc", 783}, {"alloc", 6771}, {"free_requested", 5894}, {"free_completed", 5894}}},
    {"cs336_ctx256_forward_segment_free_burst.pickle",
     4,
     {0},
     700,
     19,
     681,
     26545750016,
     26388097024,
     26252175360,
     157652992,
     23068672,
     {{"segment_free", 287},
      {"segment_alloc", 471},
      {"alloc", 2057},
      {"free_requested", 1155},
      {"free_completed", 1155}}},
    {"empty_4dev_expandable_maxsplit64.pickle", 4, {}, 0, 0, 0, 0, 0, 0, 0, 0, {}},
    {"gen1_legacy_history_at_oom.pickle",
     1,
     {0},
     176,
     2,
     174,
     11844714496,
     11840159744,
     11840159744,
     4554752,
     2080768,
     {{"snapshot", 1}}},
    {"gen2_no_time_us.pickle",
     2,
     {0},
     215,
     51,
     164,
     6471811072,
     2297283072,
     2285408452,
     4174528000,
     130023424,
     {{"alloc", 3505}, {"free_requested", 3325}, {"free_completed", 3325}, {"segment_alloc", 152}}},
    {"gen2_segments_only_list.pkl",
     2,
     {1},
     255,
     132,
     123,
     3649044480,
     3353639424,
     3308174782,
     295405056,
     31457280,
     {}},
    {"gen5_medium_512_training.pickle",
     5,
     {0},
     400,
     9,
     391,
     12660506624,
     6838108672,
     6829260804,
     5822397952,
     83886080,
     {{"alloc", 7591}, {"free_requested", 7370}, {"free_completed", 7370}, {"segment_alloc", 1}}},
    {"gen5_user_metadata_compile_context.pickle",
     5,
     {0},
     96,
     29,
     67,
     4238344192,
     3072871424,
     3064418304,
     1165472768,
     155189248,
     {{"alloc", 2162}, {"free_requested", 2162}, {"free_completed", 2162}}},
    {"h100x4_expandable_segments_oom.pickle",
     4,
     {0, 1, 2},
     12,
     3,
     9,
     114628231168,
     28728827904,
     28728795288,
     85899403264,
     27493662720,
     {{"segment_map", 293},
      {"alloc", 3025},
      {"free_requested", 2299},
      {"free_completed", 2299},
      {"segment_unmap", 6},
      {"oom", 1}}},
    {"segment_alloc_free_churn_4dev.pickle",
     4,
     {0},
     4,
     2,
     2,
     230686720,
     215105536,
     215105536,
     15581184,
     7340032,
     {{"segment_alloc", 420},
      {"alloc", 2912},
      {"free_requested", 2912},
      {"free_completed", 2912},
      {"segment_free", 420}}},
    {"small_trace_from_empty.pickle",
     4,
     {0},
     9,
     1,
     8,
     3781165056,
     31719936,
     31719428,
     3749445120,
     536870912,
     {{"segment_alloc", 9}, {"alloc", 36}, {"free_requested", 26}, {"free_completed", 26}}},
    {"state_only_expandable_maxsplit128.pickle",
     4,
     {0, 1},
     3,
     1,
     2,
     85983232,
     17049600,
     17048768,
     68933632,
     19860480,
     {}},
    {"state_only_tiny.pickle", 4, {0}, 3, 1, 2, 46137344, 21002752, 20981596, 25134592, 14548992, {}},
};

TEST(GroundTruthTest, EveryRealSnapshotMatchesTheManifest) {
  for (const Expected& want : kTable) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + want.file);
    ASSERT_TRUE(snap.ok()) << snap.status();
    EXPECT_EQ(snap->generation, want.generation);
    std::vector<uint64_t> devices;
    for (DeviceId d : DevicesWithData(*snap)) devices.push_back(d.value());
    EXPECT_EQ(devices, want.devices);
    const SegmentTotals t = SummarizeSegments(snap->segments);
    EXPECT_EQ(t.segments, want.segments);
    EXPECT_EQ(t.small_segments, want.small);
    EXPECT_EQ(t.large_segments, want.large);
    EXPECT_EQ(t.reserved.value(), want.reserved);
    EXPECT_EQ(t.active_allocated.value(), want.active_allocated);
    EXPECT_EQ(t.requested_allocated.value(), want.requested);
    EXPECT_EQ(t.inactive.value(), want.inactive);
    EXPECT_EQ(t.largest_inactive.value(), want.largest_inactive);
    EXPECT_EQ(t.pending_free.value(), 0u);
    EXPECT_EQ(CountTraceActions(*snap), want.actions);
  }
}

TEST(GroundTruthTest, BlocksTileEverySegment) {
  for (const Expected& want : kTable) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + want.file);
    ASSERT_TRUE(snap.ok()) << snap.status();
    for (const SnapshotSegment& s : snap->segments) {
      Offset next = s.address;
      for (const SnapshotBlock& b : s.blocks) {
        ASSERT_EQ(b.address, next) << "segment " << s.address.value();
        next = b.address + b.size;
      }
      ASSERT_EQ(next - s.address, s.total_size) << "segment " << s.address.value();
    }
  }
}

TEST(GroundTruthTest, H100ExpandableOom) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + "h100x4_expandable_segments_oom.pickle");
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ(snap->device_traces.size(), 4u);
  EXPECT_EQ(snap->device_traces[0].entries.size(), 6445u);
  EXPECT_EQ(snap->device_traces[3].entries.size(), 0u);
  const TraceEntry* oom = nullptr;
  for (const TraceEntry& e : snap->device_traces[1].entries) {
    if (e.action == TraceAction::kOom) oom = &e;
  }
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(oom->size, Bytes(5308694528));
  EXPECT_EQ(oom->device_free, Bytes(95682560));
  const TraceEntry& first = snap->device_traces[0].entries[0];
  EXPECT_EQ(first.action, TraceAction::kSegmentMap);
  EXPECT_EQ(first.addr, Offset(25803358208));
  EXPECT_EQ(first.size, Bytes(20971520));
  EXPECT_EQ(first.time_us(), 1757253255215904u);
  EXPECT_TRUE(snap->segments[0].is_expandable);
  EXPECT_EQ(SummarizeSegments(snap->segments, DeviceId(1)).segments, 8u);  // python: Counter of device
  EXPECT_EQ(snap->external_annotations, 4u);
  ASSERT_TRUE(snap->allocator_settings.has_value());
  EXPECT_EQ(snap->allocator_settings->alloc_conf, "expandable_segments:True");
  EXPECT_EQ(snap->allocator_settings->expandable_segments, true);
}

TEST(GroundTruthTest, SettingsOfTheMaxSplitFiles) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + "empty_4dev_expandable_maxsplit64.pickle");
  ASSERT_TRUE(snap.ok()) << snap.status();
  const AllocatorSettings& s = *snap->allocator_settings;
  EXPECT_EQ(s.alloc_conf, "expandable_segments:True,max_split_size_mb:64");
  EXPECT_EQ(s.max_split_size, 67108864);
  EXPECT_EQ(s.expandable_segments, true);
  EXPECT_EQ(s.garbage_collection_threshold, 0.0);
  ASSERT_EQ(s.roundup_power2_divisions.size(), 16u);
  EXPECT_EQ(s.roundup_power2_divisions.front(), std::make_pair(uint64_t{1}, uint64_t{0}));
  EXPECT_EQ(s.roundup_power2_divisions.back(), std::make_pair(uint64_t{32768}, uint64_t{0}));
  ASSERT_EQ(s.entries.size(), 8u);
  EXPECT_EQ(*s.Find("max_split_size"), "67108864");
  EXPECT_EQ(*s.Find("garbage_collection_threshold"), "0.0");
  EXPECT_EQ(*s.Find("release_lock_on_cudamalloc"), "False");
  EXPECT_EQ(s.Find("roundup_power2_divisions")->substr(0, 24), "{'1': 0, '2': 0, '4': 0,");
  EXPECT_EQ(snap->device_traces.size(), 4u);

  absl::StatusOr<Snapshot> tiny = LoadSnapshotFile(kSharedTorchSnapshots + "state_only_tiny.pickle");
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_EQ(tiny->allocator_settings->max_split_size, -1);
  EXPECT_EQ(tiny->allocator_settings->alloc_conf, "");
}

TEST(GroundTruthTest, Gen1BlocksGetAddressesFromTheirSegment) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + "gen1_legacy_history_at_oom.pickle");
  ASSERT_TRUE(snap.ok()) << snap.status();
  const SnapshotSegment& s = snap->segments[0];
  EXPECT_EQ(s.address, Offset(140037408686080));
  EXPECT_EQ(s.blocks[0].address, s.address);
  EXPECT_EQ(s.blocks[0].requested_size, Bytes(33554432));
  EXPECT_FALSE(snap->allocator_settings.has_value());
  const TraceEntry& e = snap->device_traces[0].entries[0];
  EXPECT_EQ(e.action, TraceAction::kSnapshot);
  EXPECT_EQ(e.size, Bytes(11840159744));
  EXPECT_FALSE(e.time_us().has_value());
}

TEST(GroundTruthTest, BareListIsSegmentsOnly) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(kSharedTorchSnapshots + "gen2_segments_only_list.pkl");
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_TRUE(snap->bare_list);
  EXPECT_TRUE(snap->device_traces.empty());
  EXPECT_EQ(snap->segments[0].device, DeviceId(1));
  EXPECT_EQ(snap->segments[0].address, Offset(139987379027968));
  EXPECT_EQ(snap->segments[0].blocks[0].state, BlockState::kFree);
  EXPECT_EQ(snap->segments[0].blocks[0].requested_size, Bytes(1572864));
}

}  // namespace
}  // namespace hbmsim
