// The peak walks' budget (sim/report/reserved_explained.h, "Why a budget")
// and the second replay that walks a passed-over peak
// (sim/scenario/peak_walk.h): a ramp of allocs makes a new peak at every
// event; walking each would visit O(events x blocks) blocks. With the budget
// the walks stay few, and the peak, walked again by one more replay, is the
// one an unbounded explainer gives, part for part.
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "sim/report/reserved_explained.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/peak_walk.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim {
namespace {

constexpr int kRampAllocs = 1000;

// `allocs` allocs of growing sizes (36 MB in all for kRampAllocs: no
// failure at 1 GiB), each kept, then every one freed: the peak is the last
// alloc (event allocs - 1), not the end.
std::string WriteRampTrace(int allocs) {
  const std::string path = fmt::format("{}/peak_walk_ramp_{}.trace", ::testing::TempDir(), allocs);
  std::ofstream out(path);
  out << "# hbmsim-trace v1\n";
  for (int i = 0; i < allocs; ++i) out << fmt::format("alloc {} {} tag=layer{}\n", i + 1, 4096 + 64 * i, i % 7);
  for (int i = 0; i < allocs; ++i) out << fmt::format("free {}\n", i + 1);
  return path;
}

struct Explained {
  std::unique_ptr<ScenarioRun> run;
  std::unique_ptr<ReservedExplainer> explainer;
};

// One replay of `scenario` under bfc at 1 GiB with an explainer of `budget`.
Explained ReplayRamp(const Scenario& scenario, const AllocatorConfig& config, int allocs, PeakWalkBudget budget) {
  Explained x;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
      ScenarioRun::Prepare(scenario, config, Bytes::GiB(1), ReplayOptions{});
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return x;
  x.run = *std::move(run);
  x.explainer = std::make_unique<ReservedExplainer>(x.run->policy(), TopUserFrames(x.run->reader()), budget);
  x.run->engine().AddObserver(x.explainer.get());
  absl::StatusOr<ReplaySummary> summary = x.run->Run();
  EXPECT_TRUE(summary.ok()) << summary.status();
  x.explainer->Finish(EventIndex(2 * allocs - 1));
  return x;
}

void ExpectSameMoment(const ReservedMoment& a, const ReservedMoment& b) {
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.reserved, b.reserved);
  EXPECT_EQ(a.allocated, b.allocated);
  ASSERT_EQ(a.parts.size(), b.parts.size());
  for (size_t i = 0; i < a.parts.size(); ++i) {
    EXPECT_EQ(a.parts[i].cause, b.parts[i].cause) << i;
    EXPECT_EQ(a.parts[i].key, b.parts[i].key) << i;
    EXPECT_EQ(a.parts[i].bytes, b.parts[i].bytes) << i;
    EXPECT_EQ(a.parts[i].blocks, b.parts[i].blocks) << i;
  }
  ASSERT_EQ(a.largest_cached.size(), b.largest_cached.size());
  for (size_t i = 0; i < a.largest_cached.size(); ++i) {
    EXPECT_EQ(a.largest_cached[i].block.offset, b.largest_cached[i].block.offset) << i;
    EXPECT_EQ(a.largest_cached[i].block.size, b.largest_cached[i].block.size) << i;
  }
}

TEST(PeakWalkTest, ARampIsWalkedAFewTimesAndItsPeakAgainExactly) {
  absl::StatusOr<Scenario> scenario = OpenScenario(WriteRampTrace(kRampAllocs), ScenarioRequest{});
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  absl::StatusOr<AllocatorConfig> config = ResolveAllocator(BuiltinPolicies(), "bfc");
  ASSERT_TRUE(config.ok()) << config.status();

  // Unbounded: one walk per alloc, the last at the peak.
  const PeakWalkBudget unbounded{0, std::numeric_limits<uint64_t>::max() / 2};
  Explained all = ReplayRamp(*scenario, *config, kRampAllocs, unbounded);
  ASSERT_NE(all.explainer, nullptr);
  EXPECT_EQ(all.explainer->peak_walks(), uint64_t{kRampAllocs});
  ASSERT_TRUE(all.explainer->peak().has_value());
  EXPECT_EQ(all.explainer->peak()->event, EventIndex(kRampAllocs - 1));
  EXPECT_FALSE(all.explainer->PeakToWalkAgain().has_value());

  // Bounded: 1 block per event beyond 20,000. The walk at alloc i counts
  // about 1.75 i blocks (each live block in its label's part, 3 in 4 also in
  // rounding's, plus the free tail), so the walks stop near i = 150 and then
  // walk only now and then; the peak passed over is not shown until it is
  // walked again.
  Explained few = ReplayRamp(*scenario, *config, kRampAllocs, PeakWalkBudget{1, 20000});
  ASSERT_NE(few.explainer, nullptr);
  EXPECT_LT(few.explainer->peak_walks(), 200u);
  EXPECT_GT(few.explainer->peak_walks(), 100u);
  EXPECT_FALSE(few.explainer->peak().has_value());
  ASSERT_TRUE(few.explainer->PeakToWalkAgain().has_value());
  EXPECT_EQ(*few.explainer->PeakToWalkAgain(), EventIndex(kRampAllocs - 1));
  // The first failure and the end are walked whatever the budget.
  ASSERT_TRUE(few.explainer->end().has_value());
  ExpectSameMoment(*few.explainer->end(), *all.explainer->end());

  ASSERT_TRUE(WalkPassedOverPeak(*scenario, *config, Bytes::GiB(1), ReplayOptions{}, *few.explainer).ok());
  EXPECT_FALSE(few.explainer->PeakToWalkAgain().has_value());
  ASSERT_TRUE(few.explainer->peak().has_value());
  ExpectSameMoment(*few.explainer->peak(), *all.explainer->peak());
}

TEST(PeakWalkTest, AWalkedPeakNeedsNoSecondReplay) {
  constexpr int kShortRamp = 200;
  absl::StatusOr<Scenario> scenario = OpenScenario(WriteRampTrace(kShortRamp), ScenarioRequest{});
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  absl::StatusOr<AllocatorConfig> config = ResolveAllocator(BuiltinPolicies(), "bfc");
  ASSERT_TRUE(config.ok()) << config.status();
  // The default budget (2 blocks per event beyond 65,536) walks every peak
  // of a short ramp: 200 walks, the one at alloc i counting at most 2i + 1
  // blocks (a live block is in its label's part and, rounded, in rounding's),
  // 40,401 in all.
  Explained x = ReplayRamp(*scenario, *config, kShortRamp, PeakWalkBudget{});
  ASSERT_NE(x.explainer, nullptr);
  ASSERT_TRUE(x.explainer->peak().has_value());
  EXPECT_EQ(x.explainer->peak()->event, EventIndex(kShortRamp - 1));
  EXPECT_EQ(x.explainer->peak_walks(), uint64_t{kShortRamp});
  EXPECT_FALSE(x.explainer->PeakToWalkAgain().has_value());
}

}  // namespace
}  // namespace hbmsim
