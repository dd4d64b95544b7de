// A policy added with only its two folders (next_fit/allocator, next_fit/
// policy) and one list line (test_policy_list.cc) gets every command: each
// test runs one in-process, as `hbmsim` would, on a trace worked by hand.
//
//   limit 1 MiB; 256 KiB at 0 (id 1), 256 KiB at 256K (id 2), free 1,
//   128 KiB: next fit searches from the cursor (512K) and takes 512K, where
//   first fit would take 0; then 512 KiB: free are [0,256K) and [640K,1M),
//   655360 B in all but no block of 512K: fragmentation.
//   Every request fits from 1152 KiB = 1179648 B (a4 at 640K needs 640K+512K);
//   first fit needs only 1 MiB (a3 at 0, a4 at 512K).
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "sim/cli/cli_run.h"
#include "sim/config/policy_registry.h"
#include "tests/common/random_ops.h"
#include "tests/hardening/differential.h"

namespace hbmsim {
namespace {

using cli::CapturedRun;
using cli::RunCliCaptured;

// One file per test: ctest runs this program's tests side by side, and a test
// rewriting a shared name while another reads it gave "no events in" there.
std::string NextFitTrace() {
  const std::string path = ::testing::TempDir() + "/next_fit_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".trace";
  std::ofstream(path) << "# hbmsim-trace v1\n# allocator: next_fit\n# device_bytes: 1048576\n"
                         "alloc 1 262144\nalloc 2 262144\nfree 1\nalloc 3 131072\nalloc 4 524288\n";
  return path;
}

nlohmann::json JsonOf(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(NextFitPolicyTest, ReplayRunsItAndPrintsItsFailureText) {
  const CapturedRun r = RunCliCaptured({"replay", NextFitTrace(), "--bytes-limit", "1MiB"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("with next_fit under the limit 1048576 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("next_fit: no free block of 524288 B after the cursor or before it"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("It is fragmentation: 655360 B (640.0KiB) was free"), std::string::npos) << r.out;
}

TEST(NextFitPolicyTest, SizeFindsTheLimitWorkedByHand) {
  const std::string json = ::testing::TempDir() + "/next_fit_size.json";
  const CapturedRun r = RunCliCaptured({"size", NextFitTrace(), "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonOf(json)["min_bytes_limit"], 1179648) << JsonOf(json).dump();
}

TEST(NextFitPolicyTest, CompareSetsItBesideFirstFit) {
  const std::string json = ::testing::TempDir() + "/next_fit_compare.json";
  const CapturedRun r =
      RunCliCaptured({"compare", NextFitTrace(), "--allocators", "next_fit,first_fit", "--json", json});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // next_fit fails at the trace's 1 MiB
  EXPECT_NE(r.out.find("Fails at L = 1048576 (1.00MiB): next_fit (exit 1)"), std::string::npos) << r.out;
  std::map<std::string, uint64_t> min_limit;
  const nlohmann::json report = JsonOf(json);
  for (const auto& row : report["rows"]) {
    min_limit[row["label"].get<std::string>()] = row["min_bytes_limit"].get<uint64_t>();
  }
  EXPECT_EQ(min_limit["next_fit"], 1179648u) << r.out;
  EXPECT_EQ(min_limit["first_fit"], 1048576u) << r.out;
}

TEST(NextFitPolicyTest, AdviseTriesItsAdviceRow) {
  const CapturedRun r = RunCliCaptured({"advise", NextFitTrace(), "--bytes-limit", "1MiB"});
  EXPECT_NE(r.out.find("next_fit with 4 KiB alignment (a test setting)"), std::string::npos) << r.out << r.err;
}

TEST(NextFitPolicyTest, InspectShowsItsStateAnalysisAndProbe) {
  const std::string json = ::testing::TempDir() + "/next_fit_inspect.json";
  const CapturedRun r = RunCliCaptured({"inspect", NextFitTrace(), "--at", "3", "--bytes-limit", "1MiB", "--probe",
                                        "512KiB", "--json", json});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the probe fails
  EXPECT_NE(r.out.find("Free memory (next fit): 655360 B in 2 blocks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("through the next_fit policy"), std::string::npos) << r.out;
  const nlohmann::json j = JsonOf(json);
  EXPECT_EQ(j["free_blocks"], 2);
  ASSERT_EQ(j["largest_live_blocks"].size(), 2u);
  EXPECT_EQ(j["largest_live_blocks"][0]["address"], 262144);  // id 2, 256 KiB
  EXPECT_EQ(j["largest_live_blocks"][1]["address"], 524288);  // id 3: next fit, not 0
  EXPECT_EQ(j["probes"][0]["verdict"], "fragmentation");
}

TEST(NextFitPolicyTest, TheFuzzersDifferentialRunsIt) {
  const std::string trace = ::testing::TempDir() + "/next_fit_differential.trace";
  std::vector<std::string> names;
  for (const testing::PolicyRun& run : testing::BuildEveryPolicy(Bytes(1 << 20), testing::WriteProgramTrace({}, trace))) {
    names.push_back(run.name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "next_fit"), names.end());
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    testing::ProgramShape shape;
    shape.num_ops = 300;
    shape.max_bytes = 1 << 18;
    EXPECT_EQ(testing::RunDifferential(seed, testing::GenerateProgram(seed, shape), Bytes(4 << 20), trace), "");
  }
}

}  // namespace
}  // namespace hbmsim
