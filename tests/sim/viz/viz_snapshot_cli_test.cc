// The HTML report and the Perfetto trace of PyTorch snapshot replays: an
// unlimited replay says "unlimited", the timeline starts with the start
// state in place, marks that restate the recorded allocator's actions are no
// slices, and failure instants sit on the thread named for them.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(VizSnapshotCli, UnlimitedTorchReplaySaysUnlimited) {
  const std::string html = TempPath("small.html");
  const CliRun run =
      RunHbmsim("replay " + kTorchSnapshotDir + "small_trace_from_empty.pickle --allocator torch --html " + html);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string page = ReadFile(html);
  EXPECT_NE(page.find(", limit unlimited from none: unlimited (the recording records no OOM).</p>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><th class=\"l\">bytes_limit</th><td>unlimited</td></tr>"), std::string::npos);
  EXPECT_EQ(page.find("-1B"), std::string::npos);
}

// gen5_user_metadata_compile_context: 447 blocks seeded, the trace's 6486
// entries after them. The timeline's first sample already holds them.
TEST(VizSnapshotCli, TimelineStartsWithTheStartState) {
  const std::string trace = TempPath("gen5.json");
  const CliRun run = RunHbmsim(
      "replay " + kTorchSnapshotDir + "gen5_user_metadata_compile_context.pickle --allocator torch --perfetto " + trace);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(trace));
  int64_t first_live = -1, first_in_use = -1;
  std::vector<std::string> slices;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "live_requested" && first_live < 0) first_live = e["args"]["bytes"];
    if (e["ph"] == "C" && e["name"] == "bytes_in_use" && first_in_use < 0) first_in_use = e["args"]["bytes"];
    if (e["ph"] == "X") slices.push_back(e["name"]);
  }
  EXPECT_GT(first_live, int64_t{3000000000});
  EXPECT_GE(first_in_use, first_live);
  EXPECT_TRUE(slices.empty()) << slices.size() << " slices, first " << slices[0];
}

// The H100 job's device 1 at its recorded capacity: the recorded OOM is a
// failure instant on the "failures and policy events" thread; the snapshot's
// 40 segment_map and 6 segment_unmap entries make no mark slices.
TEST(VizSnapshotCli, FailureInstantsAreOnTheirThreadAndRecordedSegmentEventsAreNoSlices) {
  const std::string trace = TempPath("h100.json");
  const CliRun run = RunHbmsim("replay " + kTorchSnapshotDir +
                               "h100x4_expandable_segments_oom.pickle --allocator torch --device 1 "
                               "--bytes-limit auto --perfetto " +
                               trace);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(trace));
  int failures = 0, slices = 0, failure_tid = -1;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "failures and policy events")
      failure_tid = e["tid"];
    if (e["ph"] == "X") ++slices;
    if (e["ph"] == "i" && e["cat"] == "failure") {
      ++failures;
      EXPECT_EQ(e["s"], "t");
      EXPECT_EQ(e["tid"], failure_tid);
    }
  }
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(slices, 0);
}

// The memory_viz export of the H100 job's device 1 at its recorded capacity
// has the recording's own device_free (what CUDA reported free: the limit
// less the pool, not the free bytes inside it) and the settings that ran.
TEST(VizSnapshotCli, MemoryVizExportHasTheRecordedDeviceFreeAndSettings) {
  const std::string recording =
      std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/h100x4_expandable_segments_oom.pickle";
  ASSERT_TRUE(std::filesystem::exists(recording)) << "shared recording absent: " << recording;
  const std::string out = TempPath("h100_viz.json");
  const CliRun run = RunHbmsim("replay " + recording +
                               " --device 1 --bytes-limit auto --no-advice --quiet --memory-viz " + out);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(out));
  std::vector<uint64_t> device_free;
  for (const auto& e : j["device_traces"][1]) {
    if (e["action"] == "oom") device_free.push_back(e["device_free"]);
  }
  EXPECT_EQ(device_free, std::vector<uint64_t>{95682560});
  const nlohmann::json& settings = j["allocator_settings"];
  EXPECT_EQ(settings["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
  EXPECT_EQ(settings["expandable_segments"], true);
  EXPECT_EQ(settings["max_split_size"], -1);
  EXPECT_EQ(settings["garbage_collection_threshold"], 0.0);
  EXPECT_EQ(settings["roundup_power2_divisions"].size(), 16u);
  EXPECT_EQ(settings["hbmsim_allocator"], "torch");
}

}  // namespace
}  // namespace hbmsim::testing
