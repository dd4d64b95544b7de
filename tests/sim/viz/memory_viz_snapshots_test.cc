// End to end through HBMSIM_BINARY.
// Every shipped PyTorch snapshot, replayed with --allocator torch
// --check-recorded --memory-viz, device by device: the export passes the
// viewer's backward walk, carries the recording's frames for every alloc and
// every final live block that had them, time_us on every entry when the
// recording has times, and the recorded addresses when --check-recorded
// matched them all (memory_viz_compare.py counts both sides).
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/sim/viz/memory_viz_test_util.h"

namespace hbmsim::testing {
namespace {

struct Compared {
  int rec_allocs = 0, exp_allocs = 0, rec_blocks = 0, exp_blocks = 0;
  int rec_times = 0, rec_entries = 0, exp_times = 0, exp_entries = 0;
  std::string addresses;
};

Compared Compare(const std::string& rec, const std::string& exp, int device) {
  const std::string out = RunPython("memory_viz_compare.py", rec + " " + exp + " " + std::to_string(device));
  Compared c;
  char addresses[32] = {0};
  const int n = std::sscanf(out.c_str(),
                            "allocs_with_frames %d %d; blocks_with_frames %d %d; time_us %d/%d %d/%d; "
                            "addresses %31s",
                            &c.rec_allocs, &c.exp_allocs, &c.rec_blocks, &c.exp_blocks, &c.rec_times,
                            &c.rec_entries, &c.exp_times, &c.exp_entries, addresses);
  EXPECT_EQ(n, 9) << out;
  c.addresses = addresses;
  return c;
}

// The devices whose trace has entries.
std::vector<int> DevicesWithEntries(const std::string& path) {
  std::vector<int> out;
  std::istringstream words(RunPython("memory_viz_compare.py", "--devices " + path));
  int device = 0;
  while (words >> device) out.push_back(device);
  return out;
}

TEST(MemoryVizSnapshots, EveryTorchReplayExportIsFaithful) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  int replays = 0, with_frames = 0;
  for (const std::string& path : SharedSnapshots()) {
    for (const int device : DevicesWithEntries(path)) {
      const std::string out = TempPath("export.pickle");
      const std::string json = TempPath("report.json");
      const CliRun run = RunHbmsim("replay " + path + " --allocator torch --check-recorded --device " +
                                   std::to_string(device) + " --memory-viz " + out + " --json " + json);
      ASSERT_LE(run.exit_code, 1) << path << " device " << device << ": " << run.err;
      ++replays;
      const std::string check = MemoryVizCheck(out);
      EXPECT_EQ(check.find("FAIL"), std::string::npos) << path << ": " << check;
      const Compared c = Compare(path, out, device);
      EXPECT_EQ(c.exp_allocs, c.rec_allocs) << path << " device " << device;
      EXPECT_EQ(c.exp_blocks, c.rec_blocks) << path << " device " << device;
      if (c.rec_times > 0) {
        EXPECT_EQ(c.exp_times, c.exp_entries) << path << " device " << device;
      }
      with_frames += c.exp_allocs + c.exp_blocks > 0;
      const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
      const auto& rc = j["recorded_check"];
      if (rc["allocs_matched"] == rc["allocs_total"]) {
        EXPECT_EQ(c.addresses, "recorded") << path << " device " << device;
      }
    }
  }
  EXPECT_GE(replays, 12);
  EXPECT_GE(with_frames, 10);
}

}  // namespace
}  // namespace hbmsim::testing
