// `hbmsim inspect` on the shared state-only snapshots: exit 0 with the
// analysis, totals equal to the sums over each file's own segments, one probe
// per file worked by hand, --at a recorded OOM; and `hbmsim replay` of every
// state-only file answers with the same analysis (exit 0).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "trace/torch/final_state.h"
#include "trace/torch/snapshot.h"

namespace hbmsim::testing {
namespace {

const std::string kDir = "../shared/torch_snapshots/";

nlohmann::json Inspect(const std::string& args, int want_exit = 0) {
  const std::string json = TempPath("inspect.json");
  const CliRun r = RunHbmsim("inspect " + kDir + args + " --json " + json);
  EXPECT_EQ(r.exit_code, want_exit) << args << ": " << r.err;
  EXPECT_NE(r.out.find("Memory by pool and stream"), std::string::npos) << r.out;
  return nlohmann::json::parse(ReadFile(json));
}

std::string Totals(const nlohmann::json& j) {
  const nlohmann::json& t = j["total"];
  return fmt::format("{} {} {} {} {}", t["segments"].get<uint64_t>(), t["reserved"].get<uint64_t>(),
                     t["allocated"].get<uint64_t>(), t["requested"].get<uint64_t>(),
                     t["free"].get<uint64_t>());
}

// The file's own numbers: per device, Σ segment total_size and Σ sizes of its
// active_allocated blocks, read straight from the snapshot's segments.
struct OwnNumbers {
  uint64_t reserved = 0;
  uint64_t allocated = 0;
};
std::map<uint64_t, OwnNumbers> SumSegments(const Snapshot& snap) {
  std::map<uint64_t, OwnNumbers> out;
  for (const SnapshotSegment& seg : snap.segments) {
    OwnNumbers& n = out[seg.device.value()];
    n.reserved += seg.total_size.value();
    for (const SnapshotBlock& b : seg.blocks) {
      if (b.state == BlockState::kInUse) n.allocated += b.size.value();
    }
  }
  return out;
}

std::vector<std::string> SharedSnapshots() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(HBMSIM_SOURCE_DIR) + "/" + kDir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".pickle" || ext == ".pkl") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every shared snapshot (whatever its name): inspect's totals of each device
// holding a segment are the file's own sums; a state-only file (no trace on
// any device) replays as that analysis, exit 0.
// A recording without an allocator state: one line that says which command
// shows where its memory was.
TEST(InspectCliTest, ARecordingWithoutAStatePointsToReplay) {
  const CliRun r = RunHbmsim("inspect configs/examples/oom.trace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "hbmsim inspect: configs/examples/oom.trace: text records no allocator state (inspect reads PyTorch "
            "memory snapshots); `hbmsim replay configs/examples/oom.trace` shows where the memory was at the peak "
            "and at the first failure\n");
}

// A text trace that names no allocator: --at needs one to show the state as,
// and --allocator gives it (a policy without a state analysis says so).
TEST(InspectCliTest, ATraceNamingNoAllocatorIsShownAsTheOneGiven) {
  const std::string trace = "configs/examples/fragmentation.trace";
  const CliRun none = RunHbmsim("inspect " + trace + " --at 5");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "hbmsim inspect: " + trace +
                          ": text does not say which allocator ran the job, and inspect shows a state as that "
                          "allocator counts it (a text trace names it with `# allocator: NAME`; or pass "
                          "--allocator NAME)\n");
  const CliRun tpu = RunHbmsim("inspect " + trace + " --at 5 --allocator tpu");
  EXPECT_EQ(tpu.exit_code, 2);
  EXPECT_EQ(tpu.err, "hbmsim inspect: " + trace + ": the tpu policy has no state analysis for inspect; `hbmsim "
                     "replay " + trace + "` shows where the memory was at the peak and at the first failure\n");
  // After event 5 the trace holds three 64 MiB buffers in four 64 MiB segments.
  const CliRun torch = RunHbmsim("inspect " + trace + " --at 5 --allocator torch");
  ASSERT_EQ(torch.exit_code, 0) << torch.err;
  EXPECT_NE(torch.out.find("  all                  4      268435456      201326592      201326592      201326592 "
                           "             0       67108864       67108864\n"),
            std::string::npos)
      << torch.out;
}

TEST(InspectCliTest, EverySnapshotStateAddsUpAndStateOnlyFilesReplayAsIt) {
  int state_only = 0;
  for (const std::string& file : SharedSnapshots()) {
    absl::StatusOr<Snapshot> snap = LoadSnapshotFile(std::string(HBMSIM_SOURCE_DIR) + "/" + kDir + file);
    ASSERT_TRUE(snap.ok()) << file << ": " << snap.status();
    for (const auto& [device, own] : SumSegments(*snap)) {
      const nlohmann::json j = Inspect(fmt::format("{} --device {}", file, device));
      EXPECT_EQ(j["total"]["reserved"].get<uint64_t>(), own.reserved) << file << " device " << device;
      EXPECT_EQ(j["total"]["allocated"].get<uint64_t>(), own.allocated) << file << " device " << device;
      // Reserved, explained: the parts add up to the segments' own reserved bytes.
      uint64_t parts = 0;
      for (const auto& p : j["reserved_explained"]["parts"]) parts += p["bytes"].get<uint64_t>();
      EXPECT_EQ(parts, own.reserved) << file << " device " << device;
      EXPECT_EQ(j["reserved_explained"]["reserved"].get<uint64_t>(), own.reserved) << file << " device " << device;
    }
    if (!SnapshotIsStateOnly(*snap)) continue;
    ++state_only;
    const CliRun replay = RunHbmsim("replay " + kDir + file + " --allocator torch");
    EXPECT_EQ(replay.exit_code, 0) << file << ": " << replay.err;
    EXPECT_NE(replay.out.find("holds an allocator state and no trace to replay"), std::string::npos) << file;
    EXPECT_NE(replay.out.find("Memory by pool and stream"), std::string::npos) << file;
  }
  // state_only_tiny, state_only_expandable_maxsplit128, gen2_segments_only_list,
  // docubox_state_only, empty_4dev_expandable_maxsplit64 (gen1_legacy_history_at_oom
  // has one `snapshot` entry: it replays, seeded, and its history is compared).
  EXPECT_EQ(state_only, 5);
}

// Segments, reserved, allocated (active_allocated), requested and inactive bytes
// as MANIFEST.md sums them from the files' segments.
TEST(InspectCliTest, StateOnlyFilesMatchTheirOwnSegments) {
  EXPECT_EQ(Totals(Inspect("state_only_tiny.pickle")), "3 46137344 21002752 20981596 25134592");
  EXPECT_EQ(Totals(Inspect("gen2_segments_only_list.pkl")), "255 3649044480 3353639424 3308174782 295405056");
  // Two devices: MANIFEST's 3 segments, 85983232 B, are device 0's and device 1's.
  const nlohmann::json d0 = Inspect("state_only_expandable_maxsplit128.pickle");
  const nlohmann::json d1 = Inspect("state_only_expandable_maxsplit128.pickle --device 1");
  EXPECT_EQ(d0["total"]["reserved"].get<uint64_t>() + d1["total"]["reserved"].get<uint64_t>(), 85983232u);
  EXPECT_EQ(d0["total"]["allocated"].get<uint64_t>() + d1["total"]["allocated"].get<uint64_t>(), 17049600u);
  EXPECT_EQ(d0["settings_from_snapshot"].dump(),
            R"(["expandable_segments=true","max_split_size=134217728"])");
  const nlohmann::json empty = Inspect("empty_4dev_expandable_maxsplit64.pickle");
  EXPECT_EQ(Totals(empty), "0 0 0 0 0");
  // 3 large segments (48234496 + 2 x 20971520) and 9 small of 2097152.
  const nlohmann::json docubox = Inspect("docubox_state_only.pickle");
  EXPECT_EQ(docubox["total"]["segments"], 12);
  EXPECT_EQ(docubox["total"]["reserved"], 109051904);
  EXPECT_EQ(Totals(Inspect("gen1_legacy_history_at_oom.pickle")),
            "176 11844714496 11840159744 11840159744 4554752");
}

// state_only_tiny: free large blocks of 14548992 B (0x7229a8020000) and
// 10237952 B. 10 MiB: best fit is the first; 4063232 B remain (> 1 MiB): split.
TEST(InspectCliTest, ProbeWorkedByHand) {
  const nlohmann::json j = Inspect("state_only_tiny.pickle --probe 10MiB");
  ASSERT_EQ(j["probes"].size(), 1u);
  EXPECT_EQ(j["probes"][0]["address"], 0x7229a8020000);
  EXPECT_EQ(
      j["probes"][0]["how"],
      "split the cached free block at 0x7229a8020000 of 14548992 B: 10485760 B taken, 4063232 B stay cached "
      "at 0x7229a8a20000");
}

std::string How(const nlohmann::json& j) { return j["probes"][0]["how"].get<std::string>(); }

// The other state-only files, one probe each, worked from their segments.
TEST(InspectCliTest, ProbesOfEveryStateOnlyFileWorkedByHand) {
  // Device 0's 40 MiB expandable range: free 16120832 B at 0x938c00000 and
  // 17302528 B at 0x93a37fc00. 16 MiB rounds to itself; best fit is the
  // second (the first is too small); inside an expandable segment a block is
  // split when >= 512 B remain: 17302528 - 16777216 = 525312 stay at
  // 0x93a37fc00 + 0x1000000 = 0x93b37fc00 (a cudaMalloc segment would not
  // split: 525312 <= 1 MiB).
  EXPECT_EQ(
      How(Inspect("state_only_expandable_maxsplit128.pickle --probe 16MiB")),
      "split the cached free block at 0x93a37fc00 of 17302528 B: 16777216 B taken, 525312 B stay cached "
      "at 0x93b37fc00");
  // Device 1 (the only one): the largest free large block is 31457280 B at
  // 0x7f5166600000, the only one >= 25 MiB = 26214400 B. 5242880 B remain
  // (> 1 MiB, and max_split_size is unlimited): split, the rest at
  // 0x7f5166600000 + 0x1900000 = 0x7f5167f00000.
  EXPECT_EQ(
      How(Inspect("gen2_segments_only_list.pkl --probe 25MiB")),
      "split the cached free block at 0x7f5166600000 of 31457280 B: 26214400 B taken, 5242880 B stay cached "
      "at 0x7f5167f00000");
  // Free large blocks 1352704, 2097152 and 11534336 B (0x8071c0000). 10 MiB =
  // 10485760 B fits only the last; 1048576 B would remain, which is not
  // > kSmallSize (1 MiB): the block is taken whole.
  EXPECT_EQ(How(Inspect("docubox_state_only.pickle --probe 10MiB")),
            "the cached free block at 0x8071c0000 of 11534336 B, taken whole (1048576 B beyond the rounded "
            "request)");
  // gen1 (addresses from the segment base + the sizes before): free large
  // blocks 2080768 B at 0x7f5fc1a04000 and 1310720 B. 1.5 MiB = 1572864 B
  // fits the first; 507904 B remain (<= 1 MiB): taken whole.
  EXPECT_EQ(How(Inspect("gen1_legacy_history_at_oom.pickle --probe 1572864")),
            "the cached free block at 0x7f5fc1a04000 of 2080768 B, taken whole (507904 B beyond the rounded "
            "request)");
  // No segment at all, expandable_segments on: 512 B goes to the small pool,
  // whose expandable range maps one 2 MiB page.
  const nlohmann::json empty = Inspect("empty_4dev_expandable_maxsplit64.pickle --probe 512");
  ASSERT_EQ(empty["probes"][0]["steps"].size(), 1u);
  EXPECT_EQ(empty["probes"][0]["steps"][0].get<std::string>().substr(0, 29), "segment_map: 2097152 B mapped");
}

// gen1 at its OOM, the device exactly full (capacity = reserved, 11844714496 B):
// 2 MiB fits no free large block (2080768 and 1310720 B), so it needs a new
// segment of 20 MiB (requests of 1-10 MiB get kLargeBuffer); cudaMalloc fails,
// no free segment is whole so the flush returns nothing. PyTorch's text names
// the allocation size, 20.00 MiB, not the request; 11.03 GiB capacity, 0 bytes
// free, 11840159744 B = 11.03 GiB allocated, 4554752 B = 4.34 MiB reserved but
// unallocated. hbmsim's verdict: 4554752 B are free, enough for the 2 MiB
// request, in pieces of at most 2080768 B: fragmentation.
TEST(InspectCliTest, FailingProbeAtTheDevicesEdge) {
  const nlohmann::json j =
      Inspect("gen1_legacy_history_at_oom.pickle --probe 2MiB --bytes-limit 11844714496", 1);
  const nlohmann::json& p = j["probes"][0];
  EXPECT_EQ(p["verdict"], "fragmentation");
  EXPECT_EQ(p["free_bytes"], 4554752);
  EXPECT_EQ(p["largest_free_block"], 2080768);
  EXPECT_NE(
      p["message"].get<std::string>().find(
          "Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 11.03 GiB of which 0 bytes is free. Of "
          "the allocated memory 11.03 GiB is allocated by PyTorch, and 4.34 MiB is reserved by PyTorch but "
          "unallocated."),
      std::string::npos)
      << p["message"];
}

// The biggest live blocks carry their recorded stacks (gen1: history[0].frames):
// the 411828224 B block at 0x7f5fa8000000 first, 10 frames recorded, all the
// user's (FlexGen). docubox recorded none.
TEST(InspectCliTest, BiggestBlocksWithTheirFrames) {
  const nlohmann::json j = Inspect("gen1_legacy_history_at_oom.pickle");
  const nlohmann::json& b = j["largest_live_blocks"][0];
  EXPECT_EQ(b["address"], 0x7f5fa8000000);
  EXPECT_EQ(b["size"], 411828224);
  EXPECT_EQ(b["frames_recorded"], 10);
  EXPECT_EQ(b["user_frames"][0], "/home/dingyiran/FlexGen/flexgen/pytorch_backend.py:190 in allocate");
  const CliRun text = RunHbmsim("inspect " + kDir + "gen1_legacy_history_at_oom.pickle");
  EXPECT_NE(text.out.find("      3 of 10 frames (the user's own code, innermost first):\n"
                          "        /home/dingyiran/FlexGen/flexgen/pytorch_backend.py:190 in allocate\n"),
            std::string::npos)
      << text.out;
  const CliRun docubox = RunHbmsim("inspect " + kDir + "docubox_state_only.pickle");
  EXPECT_NE(docubox.out.find("(no stack frames: the snapshot recorded none for these blocks)"),
            std::string::npos);
}

// 64 MiB device: 44 MiB reserved, 20 MiB left for cudaMalloc, no free segment to
// release; 64 MiB - 20.03 MiB active >= 30 MiB, so the verdict is fragmentation.
TEST(InspectCliTest, FailingProbeExits1WithPyTorchsMessage) {
  const nlohmann::json j = Inspect("state_only_tiny.pickle --probe 30MiB --bytes-limit 64MiB", 1);
  const nlohmann::json& p = j["probes"][0];
  EXPECT_EQ(p["ok"], false);
  EXPECT_EQ(p["verdict"], "fragmentation");
  EXPECT_EQ(p["free_bytes"], 46106112);
  EXPECT_NE(
      p["message"].get<std::string>().find(
          "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 64.00 MiB of which "
          "20.00 MiB is free. Of the allocated memory 20.03 MiB is allocated by PyTorch"),
      std::string::npos)
      << p["message"];
}

// The H100 job's device 1 right after its recorded OOM (event 421), at the
// capacity that OOM implies: reserved 84202749952 B, as the recording says.
TEST(InspectCliTest, AtTheRecordedOom) {
  const nlohmann::json j = Inspect("h100x4_expandable_segments_oom.pickle --device 1 --at oom");
  EXPECT_EQ(j["total"]["reserved"], 84202749952);
  EXPECT_EQ(j["state"].get<std::string>().substr(0, 15), "after event 421");
  const CliRun bad =
      RunHbmsim("inspect " + kDir + "h100x4_expandable_segments_oom.pickle --device 1 --at 99999");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "hbmsim inspect: --at 99999: no such event or mark in ../shared/torch_snapshots/"
            "h100x4_expandable_segments_oom.pickle (device 1: events 0-596)\n");
}

// With no --device, inspect analyses the device replay and inspect --at do:
// the H100 job's device 1, which holds the recorded OOM (before, the first
// device holding a segment, 0, whose 8 GB were not where the job failed).
TEST(InspectCliTest, TheDefaultDeviceIsTheOneTheOtherCommandsReplay) {
  const nlohmann::json chosen = Inspect("h100x4_expandable_segments_oom.pickle");
  EXPECT_EQ(chosen["device"], 1);
  EXPECT_EQ(chosen["device_reason"], "it holds the recorded OOM");
  const nlohmann::json named = Inspect("h100x4_expandable_segments_oom.pickle --device 1");
  EXPECT_EQ(Totals(chosen), Totals(named));
  EXPECT_EQ(named["device_reason"], "--device");
  const CliRun r = RunHbmsim("inspect " + kDir + "h100x4_expandable_segments_oom.pickle");
  EXPECT_NE(r.out.find("\n  device:    1 (it holds the recorded OOM)\n"), std::string::npos) << r.out;
  EXPECT_EQ(Inspect("state_only_tiny.pickle")["device_reason"], "the first device holding a segment");
}

}  // namespace
}  // namespace hbmsim::testing
