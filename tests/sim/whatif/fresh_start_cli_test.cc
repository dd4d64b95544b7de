// A recording that began with memory already reserved gets two answers
// (sim/whatif/fresh_start.h): as recorded and from a fresh start. The fresh
// start is exactly what `size --start-state place` answers, on the shared
// warm recordings, in `size`, `advise` and `replay`.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

using Json = nlohmann::json;

const std::string kShared = HBMSIM_SHARED_DIR;

// The --json report of `hbmsim ARGS`; a failed run or an absent recording fails the test with its reason.
Json JsonOf(const std::string& command, const std::string& recording, const std::string& flags,
            int want_exit = 0) {
  if (!std::filesystem::exists(recording)) {
    ADD_FAILURE() << "shared recording absent: " << recording;
    return Json();
  }
  const std::string out = TempPath(command + "_fresh.json");
  const CliRun run = RunHbmsim(command + " " + recording + " " + flags + " --jobs 2 --json " + out);
  EXPECT_EQ(run.exit_code, want_exit) << run.err;
  return run.exit_code == want_exit ? Json::parse(ReadFile(out)) : Json();
}

// Warm recordings: segments held before the first recorded event.
struct Warm {
  const char* file;
  uint64_t as_recorded, fresh_start;  // the minimum limits, bytes
};

constexpr Warm kXl{"families/xl_fwd_fp32/ctx128.pickle", 14120124416, 14097055744};
constexpr Warm kGen5{"torch_snapshots/gen5_medium_512_training.pickle", 12660506632, 12496928776};

void SizeGivesBothAndTheFreshOneIsStartStatePlace(const Warm& w) {
  const std::string recording = kShared + "/" + w.file;
  const Json seed = JsonOf("size", recording, "");
  const Json place = JsonOf("size", recording, "--start-state place");
  ASSERT_TRUE(seed.is_object() && place.is_object());
  EXPECT_EQ(seed["start_state"], "seed");
  EXPECT_EQ(seed["min_bytes_limit"], w.as_recorded);
  EXPECT_EQ(seed["fresh_start"]["min_bytes_limit"], place["min_bytes_limit"]);
  EXPECT_EQ(place["min_bytes_limit"], w.fresh_start);
  // Placing the start state is one answer: nothing fresher to add.
  EXPECT_TRUE(place["fresh_start"].is_null());
}

void AdviseGivesEverySettingFromAFreshStartToo(const Warm& w) {
  const std::string recording = kShared + "/" + w.file;
  const Json advice = JsonOf("advise", recording, "--bytes-limit 40GiB");
  ASSERT_TRUE(advice.is_object());
  EXPECT_EQ(advice["today"]["min_bytes_limit"], w.as_recorded);
  ASSERT_TRUE(advice["fresh_start"].is_object());
  EXPECT_EQ(advice["fresh_start"]["today"]["min_bytes_limit"], w.fresh_start);
  EXPECT_EQ(advice["fresh_start"]["candidates"].size(), advice["candidates"].size());
  const Json place = JsonOf("advise", recording, "--bytes-limit 40GiB --start-state place");
  ASSERT_TRUE(place.is_object());
  EXPECT_EQ(place["start_state"], "place");
  EXPECT_EQ(place["today"]["min_bytes_limit"], w.fresh_start);
  EXPECT_TRUE(place["fresh_start"].is_null());
}

TEST(FreshStart, SizeXlFwdCtx128) { SizeGivesBothAndTheFreshOneIsStartStatePlace(kXl); }
TEST(FreshStart, SizeGen5Medium512Training) { SizeGivesBothAndTheFreshOneIsStartStatePlace(kGen5); }
// Advise on gen5 too takes over 20 s: its size tests above cover that recording.
TEST(FreshStart, AdviseXlFwdCtx128) { AdviseGivesEverySettingFromAFreshStartToo(kXl); }

// The verdict says both, and which applies to what; --json has start_answers.
TEST(FreshStartReplay, VerdictSaysBothAnswers) {
  const std::string recording = kShared + "/families/xl_fwd_fp32/ctx128.pickle";
  ASSERT_TRUE(std::filesystem::exists(recording)) << "shared recording absent: " << recording;
  const std::string out = TempPath("replay_fresh.json");
  const CliRun run = RunHbmsim("replay " + recording + " --quiet --jobs 2 --json " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(
                "The recording began with 14120124416 B (13.15GiB) already reserved. As recorded (that "
                "process, its cache as it was) the job needs 14120124416 B (13.15GiB) under torch; from a "
                "fresh start (a new run: its live blocks placed through torch, the cache rebuilt) it needs "
                "14097055744 B (13.13GiB), 22.00MiB less.\n"),
            std::string::npos)
      << run.out;
  const Json j = Json::parse(ReadFile(out));
  EXPECT_EQ(j["start_answers"]["reserved_at_start"], 14120124416u);
  EXPECT_EQ(j["start_answers"]["as_recorded"]["min_bytes_limit"], 14120124416u);
  EXPECT_EQ(j["start_answers"]["fresh_start"]["min_bytes_limit"], 14097055744u);
}

// A recording that began empty has one answer: no fresh_start, no sentence.
TEST(FreshStartReplay, ARecordingFromEmptyHasOneAnswer) {
  const std::string recording = kShared + "/torch_snapshots/small_trace_from_empty.pickle";
  const Json size = JsonOf("size", recording, "");
  ASSERT_TRUE(size.is_object());
  EXPECT_TRUE(size["fresh_start"].is_null());
}

}  // namespace
}  // namespace hbmsim::testing
