// `compare --baseline A --candidate B` of two recordings of one job (issue
// 46, item 3): the peaks equal the two replays', reserved at each peak is
// explained part by part with the change, and the first events where the
// streams differ are named; worked by hand on two text traces, and checked on
// the shared families' ctx 128 and ctx 256 members.
#include <filesystem>
#include <string>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/common/sanitized_build.h"

namespace hbmsim {
namespace {

using testing::ReadFile;
using testing::RunHbmsim;
using testing::TempPath;
using testing::WriteFile;

// best_fit at 8 KiB holds the whole limit: reserved is 8192 on both sides;
// the candidate's b is 2 KiB larger, so the cached free space is 2 KiB less.
TEST(RecordingDiffCliTest, ReservedChangeByPartAndTheFirstDivergence) {
  const std::string base = TempPath("diff_base.trace");
  const std::string cand = TempPath("diff_cand.trace");
  WriteFile(base, "# hbmsim-trace v1\nalloc 1 1024 tag=a\nalloc 2 2048 tag=b\nfree 1\nfree 2\n");
  WriteFile(cand, "# hbmsim-trace v1\nalloc 1 1024 tag=a\nalloc 2 4096 tag=b\nfree 1\nfree 2\n");
  const std::string json = TempPath("diff.json");
  const testing::CliRun r = RunHbmsim("compare --baseline " + base + " --candidate " + cand +
                                      " --allocator best_fit --bytes-limit 8192 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["peaks"]["allocated"], nlohmann::json::parse(R"({"baseline":3072,"candidate":5120,"delta":2048})"));
  EXPECT_EQ(j["peaks"]["reserved"], nlohmann::json::parse(R"({"baseline":8192,"candidate":8192,"delta":0})"));
  EXPECT_EQ(j["peaks"]["live"], nlohmann::json::parse(R"({"baseline":3072,"candidate":5120,"delta":2048})"));
  EXPECT_EQ(j["reserved_explained"]["parts"], nlohmann::json::parse(R"([
      {"cause":"cached_free","baseline":5120,"candidate":3072,"delta":-2048},
      {"cause":"requested","key":"b","baseline":2048,"candidate":4096,"delta":2048},
      {"cause":"requested","key":"a","baseline":1024,"candidate":1024,"delta":0},
      {"cause":"rounding","baseline":0,"candidate":0,"delta":0}])"));
  EXPECT_EQ(j["divergence"], nlohmann::json::parse(R"({"compared":4,"differing":1,"first":[{"position":1,
      "baseline":{"event":1,"kind":"alloc","bytes":2048,"label":"b"},
      "candidate":{"event":1,"kind":"alloc","bytes":4096,"label":"b"}}]})"));
  EXPECT_NE(r.out.find("Where the two diverge first (1 of 4 positions differ in kind or bytes):\n  position 1\n"
                       "    baseline:  event 1 alloc 2048 B (2.0KiB)  b\n"
                       "    candidate: event 1 alloc 4096 B (4.0KiB)  b\n"),
            std::string::npos)
      << r.out;
}

// The families' members at ctx 128 and 256: the same job at two sizes. The
// peaks are the two replays' own, and the growth is named by the user's frame.
TEST(RecordingDiffCliTest, SharedFamiliesListGrowthByFrameWithTheReplaysPeaks) {
  // Both families; the first under the sanitizers (tests/common/sanitized_build.h).
  for (const std::string& family :
       testing::SpreadForThisBuild<std::string>({"xl_fwd_fp32", "tiny_train_step_adamw_fp32"}, 1)) {
    SCOPED_TRACE(family);
    const std::string dir = fmt::format("{}/families/{}/", HBMSIM_SHARED_DIR, family);
    const std::string base = dir + "ctx128.pickle", cand = dir + "ctx256.pickle";
    ASSERT_TRUE(std::filesystem::exists(base) && std::filesystem::exists(cand))
        << dir << " lacks ctx128.pickle or ctx256.pickle: the shared recordings are not beside the repository";
    const std::string json = TempPath(fmt::format("family_{}.json", family));
    const testing::CliRun r = RunHbmsim(fmt::format("compare --baseline {} --candidate {} --json {}", base, cand, json));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
    for (const auto& [side, file] : {std::pair{"baseline", base}, std::pair{"candidate", cand}}) {
      const std::string out = TempPath(fmt::format("family_{}_{}.json", family, side));
      const testing::CliRun replay = RunHbmsim(fmt::format("replay {} --no-advice --json {}", file, out));
      ASSERT_EQ(replay.exit_code, 0) << replay.err;
      const nlohmann::json rj = nlohmann::json::parse(ReadFile(out));
      EXPECT_EQ(j["peaks"]["allocated"][side], rj["stats"]["peak_bytes_in_use"]);
      EXPECT_EQ(j["peaks"]["reserved"][side], rj["stats"]["peak_pool_bytes"]);
      EXPECT_EQ(j["peaks"]["live"][side], rj["peak_live_bytes"]);
      EXPECT_EQ(j["reserved_explained"][side]["reserved"], rj["reserved_explained"]["peak"]["reserved"]);
    }
    // Growth is named by the user's frame (allocs whose stack has none are
    // "(untagged)"): the largest growing frame is in the text.
    const nlohmann::json* grown = nullptr;
    for (const nlohmann::json& p : j["reserved_explained"]["parts"]) {
      if (p["cause"] == "requested" && p["delta"].get<int64_t>() > 0 &&
          p["key"].get<std::string>().find(".py:") != std::string::npos) {
        grown = &p;
        break;
      }
    }
    ASSERT_NE(grown, nullptr) << j["reserved_explained"].dump();
    const std::string frame = (*grown)["key"];
    EXPECT_NE(r.out.find("requested  " + frame + "\n"), std::string::npos) << r.out;
    // Each side's parts add up to its reserved, so the changes add up to the difference.
    int64_t change = 0;
    for (const nlohmann::json& p : j["reserved_explained"]["parts"]) change += p["delta"].get<int64_t>();
    EXPECT_EQ(change, j["reserved_explained"]["candidate"]["reserved"].get<int64_t>() -
                          j["reserved_explained"]["baseline"]["reserved"].get<int64_t>());
    EXPECT_FALSE(j["divergence"]["first"].empty());
  }
}

}  // namespace
}  // namespace hbmsim
