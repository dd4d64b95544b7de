// The scenario as a user meets it: which device a snapshot replays and why,
// a start state that does not fit under the limit (never "fits"), and the
// recording's settings and device reaching `size`.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

struct Replayed {
  CliRun cli;
  nlohmann::json json;
};

Replayed Replay(const std::string& file, const std::string& flags) {
  const std::string json = TempPath("replay.json");
  Replayed r;
  r.cli = RunHbmsim(fmt::format("replay {}{} --allocator torch --no-advice {} --json {}", kTorchSnapshotDir, file, flags, json));
  if (r.cli.exit_code <= 1) r.json = nlohmann::json::parse(ReadFile(json));
  return r;
}

// Device 1 holds the recorded OOM: it is replayed without --device, the
// report says why and lists the others, and the OOM comes back at its event.
TEST(ScenarioCliTest, H100ReplaysTheDeviceWithTheRecordedOom) {
  const Replayed r = Replay("h100x4_expandable_segments_oom.pickle", "");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.err;
  EXPECT_EQ(r.json["recording"]["device"], 1);
  EXPECT_EQ(r.json["recording"]["device_reason"], "it holds the recorded OOM");
  EXPECT_EQ(r.json["allocator"]["bytes_limit"], 84298432512);
  EXPECT_EQ(r.json["allocator"]["options"]["expandable_segments"], true);
  ASSERT_EQ(r.json["failures"].size(), 1u);
  EXPECT_EQ(r.json["failures"][0]["event"], 421);
  EXPECT_EQ(r.json["failures"][0]["kind"], "oom");
  EXPECT_NE(r.cli.out.find("PyTorch snapshot (generation 4), device 1 (it holds the recorded OOM); others: "
                           "device 0 (6445 events), device 2 (882 events):\n"),
            std::string::npos)
      << r.cli.out;
  EXPECT_NE(r.cli.out.find("GPU 1 has a total capacity of 78.51 GiB"), std::string::npos);
}

TEST(ScenarioCliTest, BytesLimitAutoOnADeviceWithoutOomNamesTheOneWithIt) {
  const CliRun r = RunHbmsim("replay " + kTorchSnapshotDir +
                             "h100x4_expandable_segments_oom.pickle --allocator torch --device 0 --bytes-limit auto");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim replay: --bytes-limit auto: " + kTorchSnapshotDir +
                       "h100x4_expandable_segments_oom.pickle records no oom on device 0 (device 1 has one: "
                       "pass --device 1); pass a size\n");
}

// `size --device 1` sizes the job as it ran: expandable segments on.
TEST(ScenarioCliTest, SizeDevice1UsesTheRecordedExpandableSegments) {
  const std::string json = TempPath("size.json");
  const CliRun r = RunHbmsim("size " + kTorchSnapshotDir + "h100x4_expandable_segments_oom.pickle --allocator torch "
                             "--device 1 --jobs 2 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["device"], 1);
  EXPECT_EQ(j["allocator"]["options"]["expandable_segments"], true);
  EXPECT_EQ(j["allocator"]["options"]["device_index"], 1);
  EXPECT_NE(r.out.find("  settings:         device_index=1 expandable_segments=true (from the recording)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  device:           1 (--device); others: device 0"), std::string::npos) << r.out;
}

// A mid-run snapshot whose start state holds more than the limit never
// "fits": the run fails at event 0 with the start state's reserved bytes.
void ExpectRefused(const std::string& file, uint64_t limit, uint64_t reserved, uint64_t segments) {
  const Replayed r = Replay(file, fmt::format("--bytes-limit {}", limit));
  ASSERT_EQ(r.cli.exit_code, 1) << file << " at " << limit << ": " << r.cli.err;
  EXPECT_EQ(r.json["recording"]["start_state_refused"], true);
  ASSERT_EQ(r.json["failures"].size(), 1u);
  const nlohmann::json& f = r.json["failures"][0];
  EXPECT_EQ(f["event"], 0);
  EXPECT_EQ(f["kind"], "oom");
  EXPECT_EQ(f["requested"], reserved);
  EXPECT_EQ(f["free_bytes"], limit);
  EXPECT_NE(r.cli.out.find(
                "  outcome:    the start state does not fit under the limit: nothing replayed (1 oom at event 0)\n"),
            std::string::npos)
      << r.cli.out;
  EXPECT_NE(r.cli.out.find(fmt::format("  REFUSED:      the start state's {} B reserved in {} segments do not fit "
                                       "under the limit {} B",
                                       reserved, segments, limit)),
            std::string::npos)
      << r.cli.out;
  EXPECT_EQ(r.cli.out.find("Every allocation fit."), std::string::npos);
}

TEST(ScenarioCliTest, Gen5CompileContextAt1GiBNeverFits) {
  ExpectRefused("gen5_user_metadata_compile_context.pickle", 1ull << 30, 4238344192, 96);
}

TEST(ScenarioCliTest, Gen5MediumTrainingAt1And4And8GiBNeverFits) {
  for (const uint64_t gib : {1, 4, 8}) {
    ExpectRefused("gen5_medium_512_training.pickle", gib << 30, 12593397760, 399);
  }
}

// --start-state place: the live blocks go through the policy, and at 1 GiB
// most of the job's allocations fail.
TEST(ScenarioCliTest, PlacingTheStartStateAt1GiBFailsToo) {
  const Replayed r = Replay("gen5_user_metadata_compile_context.pickle", "--bytes-limit 1GiB --start-state place");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.err;
  EXPECT_EQ(r.json["recording"]["start_state_refused"], false);
  EXPECT_EQ(r.json["failures"].size(), 784u);
  EXPECT_NE(r.cli.out.find("  outcome:    784 of 2609 allocations failed (34 oom, 750 fragmentation)\n"),
            std::string::npos)
      << r.cli.out;
}

}  // namespace
}  // namespace hbmsim::testing
