// `hbmsim replay SNAPSHOT --allocator torch --check-recorded` on the largest
// recordings: MANIFEST.md's exact rows, through the binary (well under a second each).
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

// `hbmsim replay` of a shipped snapshot with `flags`: its --json report.
nlohmann::json Replayed(const std::string& file, const std::string& flags) {
  const std::string json = TempPath("replayed.json");
  const CliRun r = RunHbmsim("replay ../shared/torch_snapshots/" + file + " " + flags + " --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(ReadFile(json));
}

nlohmann::json CheckRecorded(const std::string& file) { return Replayed(file, "--allocator torch --check-recorded"); }

TEST(ReplaySnapshotLargeTest, Cs336FullstepIsExact) {
  const nlohmann::json j = CheckRecorded("cs336_ctx128_fullstep.pickle");
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":6771,"allocs_total":6771,"segments_matched":783,"segments_total":783})");
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 61111009280);
  EXPECT_EQ(j["counters"]["allocated_bytes.all.current"], 54873829888);
}

// Opens with the user's empty_cache(): 287 segments released, in PyTorch's order.
TEST(ReplaySnapshotLargeTest, Cs336SegmentFreeBurstIsExact) {
  const nlohmann::json j = CheckRecorded("cs336_ctx256_forward_segment_free_burst.pickle");
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":2057,"allocs_total":2057,"segments_matched":471,"segments_total":471})");
  EXPECT_EQ(j["recording"]["segment_free"].dump(), R"({"matched":287,"recorded":287,"simulated":287})");
  EXPECT_EQ(j["recording"]["empty_cache_calls"], 1);
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 26545750016);
}

TEST(ReplaySnapshotLargeTest, Gen2NoTimeUsIsExact) {
  const nlohmann::json j = CheckRecorded("gen2_no_time_us.pickle");
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":3505,"allocs_total":3505,"segments_matched":152,"segments_total":152})");
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 6471811072);
}

// History from mid-run: 664 blocks live at the start, 438 of them freed in
// the trace at their requests only. Three held an unsplit 960 KiB remainder
// that the trace's first allocs after them reveal (RebuildInitialState);
// without it the 8 MiB alloc at device_traces[0][179] went to another
// segment and 901 allocs differed. The final state is the snapshot's own
// (MANIFEST.md: reserved, active_allocated and requested bytes).
TEST(ReplaySnapshotLargeTest, Gen5MediumFromMidRunIsExact) {
  const nlohmann::json j = CheckRecorded("gen5_medium_512_training.pickle");
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":7591,"allocs_total":7591,"segments_matched":1,"segments_total":1})");
  EXPECT_EQ(j["recording"]["initial_live_blocks"], 664);
  EXPECT_EQ(j["recording"]["initial_live_bytes"], 5100482560);
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 12660506624);
  EXPECT_EQ(j["counters"]["allocated_bytes.all.current"], 6838108672);
  EXPECT_EQ(j["counters"]["requested_bytes.all.current"], 6829260804);
}

// Mid-run, 420 segments allocated and freed in the trace: with no flag the
// replay puts each new segment at its recorded base and is the recording
// (its own bases took other blocks: 436 segments, a 6.21 GB reserved peak).
TEST(ReplaySnapshotLargeTest, ChurnReplaysAsRecordedWithoutAFlag) {
  const nlohmann::json j = Replayed("segment_alloc_free_churn_4dev.pickle", "");
  EXPECT_EQ(j["counters"]["segment.all.allocated"], 424);
  EXPECT_EQ(j["counters"]["reserved_bytes.all.peak"], 5802819584);
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 230686720);
  EXPECT_EQ(j["recording"]["segment_alloc"].dump(), R"({"matched":420,"recorded":420,"simulated":420})");
}

// Expandable segments, history enabled after every page was mapped: the seeded
// 21.25 GiB run gets the unmapped rest of its VA range, so at event 384 the
// free 88.5 MiB block at its end ranks by 88.5 MiB + that tail and the freed
// 4 GiB block at 0x6ccb70000 wins the best fit, as in PyTorch.
TEST(ReplaySnapshotLargeTest, BolongExpandableIsExact) {
  const nlohmann::json j = CheckRecorded("bolong_xl_fwd_cl2048_fp32.pickle");
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":1704,"allocs_total":1704,"segments_matched":0,"segments_total":0})");
}

}  // namespace
}  // namespace hbmsim::testing
