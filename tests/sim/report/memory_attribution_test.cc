// MemoryAttribution on a hand-made trace whose peak and first failure are
// known: the `ideal` policy fits a request iff the held requested bytes stay
// within the limit, so with 8000 bytes the alloc of 4000 at event 7 fails.
//
//   event  line                          held after  note
//   0      alloc 1 1000 tag=weights       1000
//   1      alloc 2 3000 tag=fusion.1      4000
//   2      alloc 3 2000 tag=fusion.2      6000
//   3      alloc 4 500                    6500       the peak
//   4      free 2                         3500
//   5      alloc 5 1500 tag=copy.7        5000
//   6      mark step=1
//   7      alloc 6 4000 tag=fusion.3      5000       fails: 9000 > 8000
//   8      free 3                         3000
//   9      alloc 7 2500 tag=weights       5500       below the peak
//   10     free 7                         3000
#include "sim/report/memory_attribution.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "trace/formats/format_table.h"
#include "sim/engine/replay_engine.h"

namespace hbmsim {
namespace {

constexpr char kAttributionTrace[] =
    "alloc 1 1000 tag=weights\n"
    "alloc 2 3000 tag=fusion.1\n"
    "alloc 3 2000 tag=fusion.2\n"
    "alloc 4 500\n"
    "free 2\n"
    "alloc 5 1500 tag=copy.7\n"
    "mark step=1\n"
    "alloc 6 4000 tag=fusion.3\n"
    "free 3\n"
    "alloc 7 2500 tag=weights\n"
    "free 7\n";

void ReplayAttributed(MemoryAttribution& attribution, const char* trace = kAttributionTrace, uint64_t peak_from = 0) {
  // One file per test: ctest runs each TEST as its own process, in parallel, and
  // a shared name let one test read the trace another was writing.
  const std::string path = ::testing::TempDir() + "/memory_attribution_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".trace";
  std::ofstream(path, std::ios::binary) << trace;
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  absl::StatusOr<std::unique_ptr<Allocator>> ideal =
      BuildAllocator(DefaultConfig(*BuiltinPolicies().Find("ideal")), Bytes(8000));
  ASSERT_TRUE(ideal.ok());
  ReplayOptions options;
  options.peak_from = peak_from;
  ReplayEngine engine(**ideal, options);
  engine.AddObserver(&attribution);
  absl::StatusOr<ReplaySummary> summary = engine.Run(**reader);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(summary->failures, 1u);
}

TEST(MemoryAttributionTest, OpDropsTheInstanceNumber) {
  EXPECT_EQ(OpOfTag("fusion.12"), "fusion");
  EXPECT_EQ(OpOfTag("copy_3"), "copy");
  EXPECT_EQ(OpOfTag("weights"), "weights");
  EXPECT_EQ(OpOfTag("1234"), "1234");
  EXPECT_EQ(OpOfTag("x."), "x.");
}

TEST(MemoryAttributionTest, PeakAndFirstFailureTablesAreExact) {
  MemoryAttribution attribution(/*top_buffers=*/3);
  ReplayAttributed(attribution);
  EXPECT_EQ(RenderMemoryAttributionText(attribution, /*rows=*/3),
            "The first failed request (event 7): 4000 bytes (3.9KiB) for id 6, oom, tag fusion.3\n"
            "Where the memory was at the first failure (event 7): 5000 bytes (4.9KiB) held in 4 buffers\n"
            "  by tag\n"
            "     40.0%            2000     2.0KiB       1 buf  fusion.2\n"
            "     30.0%            1500     1.5KiB       1 buf  copy.7\n"
            "     20.0%            1000      1000B       1 buf  weights\n"
            "     10.0%             500       500B       1 buf  (untagged)\n"
            "  by op\n"
            "     40.0%            2000     2.0KiB       1 buf  fusion\n"
            "     30.0%            1500     1.5KiB       1 buf  copy\n"
            "     20.0%            1000      1000B       1 buf  weights\n"
            "     10.0%             500       500B       1 buf  (untagged)\n"
            "  largest 3 buffers\n"
            "              2000     2.0KiB  id 3 (event 2) fusion.2\n"
            "              1500     1.5KiB  id 5 (event 5) copy.7\n"
            "              1000      1000B  id 1 (event 0) weights\n"
            "Where the memory was at the peak (event 3): 6500 bytes (6.3KiB) held in 4 buffers\n"
            "  by tag\n"
            "     46.2%            3000     2.9KiB       1 buf  fusion.1\n"
            "     30.8%            2000     2.0KiB       1 buf  fusion.2\n"
            "     15.4%            1000      1000B       1 buf  weights\n"
            "      7.7%             500       500B       1 buf  (untagged)\n"
            "  by op\n"
            "     76.9%            5000     4.9KiB       2 buf  fusion\n"
            "     15.4%            1000      1000B       1 buf  weights\n"
            "      7.7%             500       500B       1 buf  (untagged)\n"
            "  largest 3 buffers\n"
            "              3000     2.9KiB  id 2 (event 1) fusion.1\n"
            "              2000     2.0KiB  id 3 (event 2) fusion.2\n"
            "              1000      1000B  id 1 (event 0) weights\n");
}

// Events before ReplayOptions::peak_from only rebuild a start state: the
// engine says when they are done (OnStartStateBuilt), and the peak counts from
// the state they leave, as the engine's own.
TEST(MemoryAttributionTest, ThePeakCountsFromTheStartStateOn) {
  struct Case {
    uint64_t from;
    uint64_t event, bytes, buffers;
  };
  for (const Case c : {Case{5, 9, 5500, 4},    // 6500 at event 3 is the start state's; 5500 at 9 is the most after
                       Case{10, 9, 5500, 4},   // the state events 0-9 leave, at its last event
                       Case{11, 10, 3000, 3},  // a trace no longer than its start state: what it leaves
                       Case{0, 3, 6500, 4}}) {
    MemoryAttribution attribution;
    ReplayAttributed(attribution, kAttributionTrace, c.from);
    const std::optional<MemoryBreakdown> peak = attribution.AtPeak();
    ASSERT_TRUE(peak.has_value()) << c.from;
    EXPECT_EQ(peak->event, EventIndex(c.event)) << c.from;
    EXPECT_EQ(peak->held_bytes, c.bytes) << c.from;
    EXPECT_EQ(peak->held_buffers, c.buffers) << c.from;
  }
}

// The peak is the alloc right before the failing one: its tables are the
// failure's, said in one line instead of twice.
// The peak (events 0-1) holds what the failure (event 2) held.
constexpr char kFailsRightAfterThePeak[] =
    "alloc 1 3000 tag=weights\n"
    "alloc 2 4000 tag=act.1\n"
    "alloc 3 2000 tag=act.2\n"  // 9000 > 8000: fails
    "free 2\n"
    "free 1\n";

TEST(MemoryAttributionTest, APeakHoldingWhatTheFailureHeldIsOneLine) {
  MemoryAttribution attribution(/*top_buffers=*/3);
  ReplayAttributed(attribution, kFailsRightAfterThePeak);
  EXPECT_EQ(RenderMemoryAttributionText(attribution, /*rows=*/3),
            "The first failed request (event 2): 2000 bytes (2.0KiB) for id 3, oom, tag act.2\n"
            "Where the memory was at the first failure (event 2): 7000 bytes (6.8KiB) held in 2 buffers\n"
            "  by tag\n"
            "     57.1%            4000     3.9KiB       1 buf  act.1\n"
            "     42.9%            3000     2.9KiB       1 buf  weights\n"
            "  by op\n"
            "     57.1%            4000     3.9KiB       1 buf  act\n"
            "     42.9%            3000     2.9KiB       1 buf  weights\n"
            "  largest 2 buffers\n"
            "              4000     3.9KiB  id 2 (event 1) act.1\n"
            "              3000     2.9KiB  id 1 (event 0) weights\n"
            "Where the memory was at the peak (event 1): 7000 bytes (6.8KiB) held in 2 buffers, the same tables "
            "as at the first failure\n");
}

// `replay` names the failing request in its own block above the tables (with
// its stack): there the tables open with where the memory was, not the request again.
TEST(MemoryAttributionTest, TheFailedRequestLineIsLeftToACallerThatShowedIt) {
  MemoryAttribution attribution(/*top_buffers=*/3);
  ReplayAttributed(attribution, kFailsRightAfterThePeak);
  const std::string named = RenderMemoryAttributionText(attribution, /*rows=*/3);
  const std::string unnamed = RenderMemoryAttributionText(attribution, /*rows=*/3, /*name_failed_request=*/false);
  const std::string line = "The first failed request (event 2): 2000 bytes (2.0KiB) for id 3, oom, tag act.2\n";
  EXPECT_EQ(named, line + unnamed);
  EXPECT_EQ(unnamed.substr(0, 91),
            "Where the memory was at the first failure (event 2): 7000 bytes (6.8KiB) held in 2 buffers\n");
}

TEST(MemoryAttributionTest, GroupsBeyondTheRowsAreSummedOnOneLine) {
  MemoryAttribution attribution;
  ReplayAttributed(attribution);
  const std::string text = RenderMemoryAttributionText(attribution, /*rows=*/2);
  // At the peak: weights 1000 and (untagged) 500 after fusion.1 and fusion.2.
  EXPECT_NE(text.find("     23.1%            1500     1.5KiB       2 buf  (2 more groups)\n"),
            std::string::npos)
      << text;
}

TEST(MemoryAttributionTest, JsonCarriesEveryGroup) {
  MemoryAttribution attribution;
  ReplayAttributed(attribution);
  const nlohmann::json j = nlohmann::json::parse(RenderMemoryAttributionJson(attribution));
  EXPECT_EQ(j["peak"]["event"], 3);
  EXPECT_EQ(j["peak"]["held_bytes"], 6500);
  ASSERT_EQ(j["peak"]["by_tag"].size(), 4u);
  EXPECT_EQ(j["peak"]["by_tag"][3]["key"], "(untagged)");
  EXPECT_EQ(j["peak"]["by_tag"][3]["bytes"], 500);
  EXPECT_EQ(j["peak"]["by_op"][0]["key"], "fusion");
  EXPECT_EQ(j["peak"]["by_op"][0]["buffers"], 2);
  EXPECT_TRUE(j["peak"]["by_frame"].empty());
  EXPECT_EQ(j["first_failure"]["held_bytes"], 5000);
  EXPECT_EQ(j["first_failure"]["largest"][0]["id"], 3);
  EXPECT_EQ(j["failed_request"]["requested"], 4000);
  EXPECT_EQ(j["failed_request"]["kind"], "oom");
  EXPECT_EQ(j["failed_request"]["tag"], "fusion.3");
}

TEST(MemoryAttributionTest, FramesGroupWhenTheCallerNamesThem) {
  // Stands in for a snapshot's first frame outside torch: here, by buffer id.
  MemoryAttribution attribution(
      10, [](const Event& e) { return e.id % 2 == 0 ? "models.py:181" : "train.py:12"; });
  ReplayAttributed(attribution);
  const std::optional<MemoryBreakdown> peak = attribution.AtPeak();
  ASSERT_TRUE(peak.has_value());
  ASSERT_EQ(peak->by_frame.size(), 2u);
  EXPECT_EQ(peak->by_frame[0].key, "models.py:181");  // ids 2 and 4: 3500 bytes
  EXPECT_EQ(peak->by_frame[0].bytes, 3500u);
  EXPECT_EQ(peak->by_frame[1].key, "train.py:12");  // ids 1 and 3: 3000 bytes
}

// Every alloc of a replay passes the attribution, so its tags and frames are
// kept once each and dropped with the last buffer that holds them: a trace
// whose every buffer has a tag of its own holds as many labels as buffers
// held or kept for the peak, never as many as it ever named. A dropped
// label's number, given to another, never renames a buffer kept for the peak.
TEST(MemoryAttributionTest, LabelsStayWithTheHeldBuffers) {
  MemoryAttribution attribution(10, [](const Event& e) { return e.id == 1 ? "models.py:181" : ""; });
  const auto alloc = [&](uint64_t id, uint64_t bytes, std::string tag) {
    Event e;
    e.kind = EventKind::kAlloc;
    e.id = id;
    e.bytes = Bytes(bytes);
    e.tag = std::move(tag);
    attribution.OnAlloc(EventIndex(id), e, AllocResult{});
  };
  const auto release = [&](uint64_t id) {
    Event e;
    e.kind = EventKind::kFree;
    e.id = id;
    attribution.OnRelease(EventIndex(id), e);
  };
  alloc(1, 5000, "weights");  // the peak: 5000 held
  release(1);                 // kept for the peak, with its tag and frame
  EXPECT_EQ(attribution.labels_kept(), 4u);
  for (uint64_t id = 2; id < 1002; ++id) {
    alloc(id, 10, "scratch." + std::to_string(id));
    alloc(id + 100000, 10, "");  // untagged: "(untagged)", always kept
    release(id);
    release(id + 100000);
  }
  EXPECT_EQ(attribution.labels_kept(), 4u);
  alloc(5000, 20, "kv_cache");
  EXPECT_EQ(attribution.labels_kept(), 5u);
  const std::optional<MemoryBreakdown> peak = attribution.AtPeak();
  ASSERT_TRUE(peak.has_value());
  ASSERT_EQ(peak->by_tag.size(), 1u);
  EXPECT_EQ(peak->by_tag[0].key, "weights");
  EXPECT_EQ(peak->by_tag[0].bytes, 5000u);
  ASSERT_EQ(peak->by_frame.size(), 1u);
  EXPECT_EQ(peak->by_frame[0].key, "models.py:181");
  ASSERT_EQ(peak->largest.size(), 1u);
  EXPECT_EQ(peak->largest[0].tag, "weights");
  alloc(6000, 9000, "activations");  // a new peak: the one kept before goes, and its labels
  EXPECT_EQ(attribution.labels_kept(), 4u);
  EXPECT_EQ(attribution.AtPeak()->by_tag[0].key, "activations");
  EXPECT_EQ(attribution.AtPeak()->by_tag[1].key, "kv_cache");
}

TEST(MemoryAttributionTest, NothingHeldSaysSo) {
  MemoryAttribution attribution;
  EXPECT_FALSE(attribution.AtPeak().has_value());
  EXPECT_EQ(RenderMemoryAttributionText(attribution), "Where the memory went: no buffer was held\n");
}

}  // namespace
}  // namespace hbmsim
