// The event log `size` keeps in memory (sim/engine/event_log.h): every event
// the survey reads, field for field, or none at all when one event holds
// more than a record can.
#include "sim/engine/event_log.h"
#include "sim/whatif/scenario_event_log.h"

#include <numeric>

#include "fmt/format.h"

#include "sim/all_layers.h"
#include "sim/whatif/checkpoints.h"
#include "sim/engine/huge_page_vector.h"
#include "sim/whatif/trial.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

constexpr char kMixed[] =
    "alloc 1 1000\n"
    "alloc 2 4096 stream=3\n"
    "mark warmup\n"
    "alloc 3 512 device=1\n"
    "free 1\n"
    "free_requested 2 stream=3\n"
    "free_completed 2 stream=3\n"
    "free 3 device=1\n";

TEST(EventLogTest, TheSurveyKeepsEveryEventWhenAsked) {
  const testing::TestTrace t = testing::TraceFromText(kMixed);
  absl::StatusOr<ScenarioSurvey> kept = SurveyScenario(*t.scenario, SurveyOptions{true});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_NE(kept->events, nullptr);
  const EventLog& log = *kept->events;
  ASSERT_EQ(log.events.size(), 8u);
  EXPECT_EQ(kept->events_read, 8u);
  std::vector<WideEvent> e;
  for (uint64_t i = 0; i < 8; ++i) e.push_back(log.At(i));
  EXPECT_EQ(log.wide.size(), 0u);  // every one fits a compact record
  EXPECT_EQ(e[0].kind, EventKind::kAlloc);
  EXPECT_EQ(e[0].id, 0u);  // buffer 1 is the device's first: number 0
  EXPECT_EQ(e[0].bytes, 1000u);
  EXPECT_EQ(e[1].id, 1u);
  EXPECT_EQ(log.lanes[e[1].lane].stream, 3u);
  EXPECT_EQ(e[1].bytes, 4096u);
  EXPECT_EQ(e[2].kind, EventKind::kMark);
  EXPECT_EQ(log.lanes[e[3].lane].device, 1u);
  EXPECT_EQ(e[3].id, 3u);  // another device's: never replayed, not numbered
  EXPECT_EQ(e[4].id, 0u);
  EXPECT_EQ(e[5].kind, EventKind::kFreeRequested);
  EXPECT_EQ(e[5].id, 1u);
  EXPECT_EQ(e[6].kind, EventKind::kFreeCompleted);
  EXPECT_EQ(e[6].id, 1u);
  EXPECT_EQ(e[7].id, 3u);
  EXPECT_TRUE(kept->events->ids_numbered);
  EXPECT_EQ(log.lanes[e[6].lane].stream, 3u);
  EXPECT_EQ(log.lanes[e[7].lane].device, 1u);
  // The rest of the survey is what it is without the log.
  EXPECT_EQ(kept->peak_live_bytes, t.survey.peak_live_bytes);
  EXPECT_EQ(kept->events_replayed, t.survey.events_replayed);
  EXPECT_EQ(t.survey.events, nullptr);  // not asked
}

// The survey numbers the live buffers, a freed number first, so the ids a
// trial looks up are the least numbers; a program keeps its id (programs
// have a table of their own). A log read without the survey keeps the ids.
TEST(EventLogTest, TheSurveyNumbersTheLiveBuffersReusingFreedNumbers) {
  const testing::TestTrace t = testing::TraceFromText(
      "alloc 900 64\nalloc 70 64\nprogram_load 5 128\nfree 900\nalloc 31 64\nalloc 8 64\n"
      "free 70\nprogram_unload 5\nfree 31\nfree 8\n");
  absl::StatusOr<ScenarioSurvey> kept = SurveyScenario(*t.scenario, SurveyOptions{true});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_NE(kept->events, nullptr);
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < kept->events->events.size(); ++i) ids.push_back(kept->events->At(i).id);
  // 900 -> 0, 70 -> 1, the program (number 2) keeps 5, 31 -> 0 (900's, freed
  // last), 8 -> 3.
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 5, 0, 0, 3, 1, 5, 0, 3}));
  std::shared_ptr<const EventLog> read = ReadEventLog(*t.scenario, 0);
  ASSERT_NE(read, nullptr);
  EXPECT_FALSE(read->ids_numbered);
  EXPECT_EQ(read->At(0).id, 900u);
}

TEST(EventLogTest, NoLogForEventsARecordCannotHold) {
  for (const char* text : {"alloc 1 64\nalloc 2 64 step=3\nfree 1\nfree 2\n",
                           "alloc 1 64\nalloc 2 4096 shape=f32[32,32]\nfree 1\nfree 2\n"}) {
    const testing::TestTrace t = testing::TraceFromText(text);
    absl::StatusOr<ScenarioSurvey> s = SurveyScenario(*t.scenario, SurveyOptions{true});
    ASSERT_TRUE(s.ok()) << text;
    EXPECT_EQ(s->events, nullptr) << text;
    EXPECT_EQ(ReadEventLog(*t.scenario, 0), nullptr) << text;
  }
}

// A record holds bytes below 2^48 and up to 4,096 (device, stream) lanes.
TEST(EventLogTest, NoLogPastWhatARecordPacks) {
  const std::string huge = fmt::format("alloc 1 {}\nfree 1\n", uint64_t{1} << 48);
  const std::string largest = fmt::format("alloc 1 {}\nfree 1\n", (uint64_t{1} << 48) - 1);
  std::string many_lanes, most_lanes;
  for (int s = 0; s < 4097; ++s) {
    const std::string line = fmt::format("alloc {} 256 stream={}\nfree {} stream={}\n", s + 1, s, s + 1, s);
    many_lanes += line;
    if (s < 4096) most_lanes += line;
  }
  for (const auto& [text, logged] : std::vector<std::pair<std::string, bool>>{
           {huge, false}, {largest, true}, {many_lanes, false}, {most_lanes, true}}) {
    const testing::TestTrace t = testing::TraceFromText(text);
    absl::StatusOr<ScenarioSurvey> s = SurveyScenario(*t.scenario, SurveyOptions{true});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->events != nullptr, logged) << text.substr(0, 40);
  }
  const testing::TestTrace t = testing::TraceFromText(most_lanes);
  std::shared_ptr<const EventLog> log = ReadEventLog(*t.scenario, 0);
  ASSERT_NE(log, nullptr);
  const WideEvent last = log->At(log->events.size() - 1);
  EXPECT_EQ(last.kind, EventKind::kFree);
  EXPECT_EQ(last.id, 4096u);
  EXPECT_EQ(last.lane, 4095u);
  EXPECT_EQ(log->lanes[last.lane].stream, 4095u);
  const testing::TestTrace big = testing::TraceFromText(largest);
  EXPECT_EQ(ReadEventLog(*big.scenario, 0)->At(0).bytes, (uint64_t{1} << 48) - 1);
}

// A record is 8 bytes where the fields fit (bytes < 2^32, id < 2^20, lane <
// 256), else an escape to a wide record; the events read back the same either
// way, and an id too large for a compact record may become a number that fits.
TEST(EventLogTest, EventsPastTheCompactFieldsGoWide) {
  std::string text = fmt::format("alloc 5000000 {}\nalloc 7 {}\n", uint64_t{1} << 32, (uint64_t{1} << 32) - 1);
  for (int s = 0; s < 300; ++s) text += fmt::format("alloc {} 256 stream={}\n", 100 + s, s);
  text += "free 5000000\nfree 7\n";
  const testing::TestTrace t = testing::TraceFromText(text);
  std::shared_ptr<const EventLog> read = ReadEventLog(*t.scenario, 0);  // the trace's ids
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->events.size(), 304u);
  EXPECT_TRUE(read->events[0].escaped());  // id and bytes both too large
  EXPECT_EQ(read->At(0), (WideEvent{5000000, uint64_t{1} << 32, 0, EventKind::kAlloc}));
  EXPECT_FALSE(read->events[1].escaped());
  EXPECT_EQ(read->At(1), (WideEvent{7, (uint64_t{1} << 32) - 1, 0, EventKind::kAlloc}));
  EXPECT_FALSE(read->events[257].escaped());  // stream 255: lane 255
  EXPECT_EQ(read->At(257).lane, 255u);
  EXPECT_TRUE(read->events[258].escaped());  // lane 256
  EXPECT_EQ(read->lanes[read->At(258).lane].stream, 256u);
  EXPECT_TRUE(read->events[302].escaped());  // the free of id 5000000
  EXPECT_EQ(read->At(302), (WideEvent{5000000, 0, 0, EventKind::kFree}));
  EXPECT_EQ(read->wide.size(), 1u + 44u + 1u);  // the first alloc, lanes 256-299, its free
  // The survey numbers the buffers: 5000000 becomes 0, its free compact again.
  absl::StatusOr<ScenarioSurvey> kept = SurveyScenario(*t.scenario, SurveyOptions{true});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_NE(kept->events, nullptr);
  EXPECT_EQ(kept->events->At(0), (WideEvent{0, uint64_t{1} << 32, 0, EventKind::kAlloc}));
  EXPECT_TRUE(kept->events->events[0].escaped());  // its bytes still do not fit
  EXPECT_FALSE(kept->events->events[302].escaped());
  EXPECT_EQ(kept->events->At(302), (WideEvent{0, 0, 0, EventKind::kFree}));
  EXPECT_EQ(kept->events->wide.size(), 1u + 44u);
}

TEST(EventLogTest, NoLogUntilTheReaderHasEnded) {
  const testing::TestTrace t = testing::TraceFromText(kMixed);
  absl::StatusOr<std::unique_ptr<EventReader>> inner = t.scenario->Events();
  ASSERT_TRUE(inner.ok());
  LoggingReader logging(**inner, 0);
  Event e;
  ASSERT_TRUE(*logging.Next(e));
  EXPECT_EQ(e.id, 1u);  // events pass through unchanged
  EXPECT_EQ(logging.log(), nullptr);
  while (*logging.Next(e)) {
  }
  ASSERT_NE(logging.log(), nullptr);
  EXPECT_EQ(logging.log()->events.size(), 8u);
}

TEST(EventLogTest, HugePageVectorKeepsItsValuesAcrossGrowthAndCopies) {
  HugePageVector<uint64_t> v;
  for (uint64_t i = 0; i < (uint64_t{3} << 20); ++i) v.push_back(i * 7);  // 24 MiB, through many regrowths
  HugePageVector<uint64_t> copy = v;
  ASSERT_EQ(copy.size(), uint64_t{3} << 20);
  uint64_t bad = 0;
  for (uint64_t i = 0; i < copy.size(); ++i) bad += copy[i] != i * 7;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % huge_pages::kHugePage, 0u);
  HugePageVector<uint64_t> small(10, 5);  // under a huge page: plain memory
  EXPECT_EQ(std::accumulate(small.begin(), small.end(), uint64_t{0}), 50u);
}

// Every online policy's trials share the log (those with limit windows also
// checkpoints); an offline planner's trials replay its plan, made from the
// recording, so they do not.
TEST(EventLogTest, MaySharePolicyByPolicy) {
  const testing::TestTrace t = testing::TraceFromText(kMixed);
  EXPECT_TRUE(SharedTrials::MayShare(*t.scenario, testing::Config("bfc")));
  EXPECT_TRUE(SharedTrials::MayShare(*t.scenario, testing::Config("torch")));
  EXPECT_TRUE(SharedTrials::MayShare(*t.scenario, testing::Config("best_fit")));
  EXPECT_TRUE(SharedTrials::MayShare(*t.scenario, testing::Config("bfc", {"allow_growth=true"})));
  EXPECT_TRUE(SharedTrials::MayShare(*t.scenario, testing::Config("torch", {"expandable_segments=true"})));
  EXPECT_FALSE(SharedTrials::MayShare(*t.scenario, testing::Config("offline")));
}

}  // namespace
}  // namespace hbmsim
