// For every PyTorch snapshot in shared/torch_snapshots (the directory is
// listed, so a new file is covered too) and every device with a trace:
//   size gives L; replay at L fits; replay at L - 512 fails, or size printed
//   its non-monotonicity warning;
//   compare's row at L - 512 and at L equals replay's numbers there.
// All three commands run the same replay (sim/scenario), so any difference
// is a bug in how a command sets the scenario up.
#include <filesystem>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/common/sanitized_build.h"

namespace hbmsim::testing {
namespace {

std::vector<std::string> Snapshots() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HBMSIM_SOURCE_DIR) + "/" + kTorchSnapshotDir)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".pickle" || ext == ".pkl") out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The devices with a trace, as replay's JSON lists them; empty for a
// snapshot without any trace (replay then answers with the state analysis,
// whose JSON has no "recording").
std::vector<uint64_t> DevicesOf(const std::string& file) {
  const std::string json = TempPath("devices.json");
  const CliRun r = RunHbmsim(fmt::format("replay {}{} --allocator torch --json {}", kTorchSnapshotDir, file, json));
  if (r.exit_code == 2) {
    EXPECT_NE(r.err.find("no trace for device"), std::string::npos) << file << ": " << r.err;
    return {};
  }
  std::vector<uint64_t> out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  if (!j.contains("recording")) {
    EXPECT_NE(r.out.find("holds an allocator state and no trace to replay"), std::string::npos) << file;
    return {};
  }
  for (const auto& d : j["recording"]["devices"]) out.push_back(d["device"].get<uint64_t>());
  return out;
}

struct AgreementRun {
  int exit_code = -1;
  nlohmann::json json;
};

AgreementRun ReplayAt(const std::string& file, uint64_t device, uint64_t limit) {
  const std::string json = TempPath("replay.json");
  const CliRun r =
      RunHbmsim(fmt::format("replay {}{} --allocator torch --no-advice --device {} --bytes-limit {} --json {}", kTorchSnapshotDir,
                            file, device, limit, json));
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << file << ": " << r.err;
  return {r.exit_code, r.exit_code <= 1 ? nlohmann::json::parse(ReadFile(json)) : nlohmann::json()};
}

// compare's at_limit row against replay's report at the same limit.
void ExpectRowEqualsReplay(const std::string& what, const nlohmann::json& row, const AgreementRun& r) {
  const nlohmann::json& at = row["at_limit"];
  uint64_t oom = 0, fragmentation = 0;
  for (const auto& f : r.json["failures"]) (f["kind"] == "oom" ? oom : fragmentation)++;
  EXPECT_EQ(at["failures"], r.json["failures"].size()) << what;
  EXPECT_EQ(at["oom"], oom) << what;
  EXPECT_EQ(at["fragmentation"], fragmentation) << what;
  EXPECT_EQ(at["peak_bytes_in_use"], r.json["stats"]["peak_bytes_in_use"]) << what;
  EXPECT_EQ(at["peak_pool_bytes"], r.json["stats"]["peak_pool_bytes"]) << what;
  EXPECT_EQ(r.exit_code, r.json["failures"].empty() ? 0 : 1) << what;
}

TEST(SnapshotAgreementTest, SizeReplayAndCompareAgreeOnEverySnapshotAndDevice) {
  int sized = 0;
  // Every snapshot; 4 under the sanitizers (tests/common/sanitized_build.h).
  for (const std::string& file : SpreadForThisBuild(Snapshots(), 4)) {
    for (const uint64_t device : DevicesOf(file)) {
      const std::string what = fmt::format("{} device {}", file, device);
      const std::string size_json = TempPath("size.json");
      const CliRun s = RunHbmsim(fmt::format("size {}{} --allocator torch --device {} --jobs 2 --json {}",
                                             kTorchSnapshotDir, file, device, size_json));
      ASSERT_EQ(s.exit_code, 0) << what << ": " << s.err;
      const nlohmann::json size = nlohmann::json::parse(ReadFile(size_json));
      const uint64_t limit = size["min_bytes_limit"];
      const bool non_monotonic = !size["non_monotonic"].is_null();
      EXPECT_EQ(non_monotonic, s.out.find("WARNING: not monotonic") != std::string::npos) << what;
      const AgreementRun at = ReplayAt(file, device, limit);
      EXPECT_EQ(at.exit_code, 0) << what << " at " << limit;
      const AgreementRun below = ReplayAt(file, device, limit - 512);
      EXPECT_TRUE(below.exit_code == 1 || non_monotonic) << what << " at " << limit - 512;

      const std::string compare_json = TempPath("compare.json");
      for (const uint64_t l : {limit - 512, limit}) {
        const CliRun c =
            RunHbmsim(fmt::format("compare {}{} --allocators torch --device {} --bytes-limit {} "
                                  "--jobs 2 --json {}",
                                  kTorchSnapshotDir, file, device, l, compare_json));
        // compare exits 1 when the row fails at the limit, as replay does.
        ASSERT_EQ(c.exit_code, (l == limit ? at : below).exit_code) << what << ": " << c.err;
        const nlohmann::json row = nlohmann::json::parse(ReadFile(compare_json))["rows"][0];
        EXPECT_EQ(row["min_bytes_limit"], limit) << what;
        ExpectRowEqualsReplay(fmt::format("{} at {}", what, l), row, l == limit ? at : below);
      }
      ++sized;
    }
  }
  // The shipped files alone have 12 devices with traces.
  EXPECT_GE(sized, ForThisBuild(10, 2));
}

}  // namespace
}  // namespace hbmsim::testing
