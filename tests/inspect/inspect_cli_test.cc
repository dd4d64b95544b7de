// `hbmsim inspect` on the shared state-only snapshots: exit 0 with the
// analysis, totals equal to the sums over each file's own segments
// (MANIFEST.md's ground truth), probes worked by hand, --at a recorded OOM.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

const std::string kDir = "../shared/torch_snapshots/";

nlohmann::json Inspect(const std::string& args, int want_exit = 0) {
  const std::string json = TempPath("inspect.json");
  const CliRun r = RunHbmsim("inspect " + kDir + args + " --json " + json);
  EXPECT_EQ(r.exit_code, want_exit) << r.err;
  EXPECT_NE(r.out.find("Memory by pool and stream"), std::string::npos) << r.out;
  return nlohmann::json::parse(ReadFile(json));
}

std::string Totals(const nlohmann::json& j) {
  const nlohmann::json& t = j["total"];
  return fmt::format("{} {} {} {} {}", t["segments"].get<uint64_t>(), t["reserved"].get<uint64_t>(),
                     t["allocated"].get<uint64_t>(), t["requested"].get<uint64_t>(),
                     t["free"].get<uint64_t>());
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
  const nlohmann::json docubox = Inspect("docubox_state_only.pickle");
  EXPECT_EQ(docubox["total"]["segments"], 12);
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

}  // namespace
}  // namespace hbmsim::testing
