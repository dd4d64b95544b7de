// compare's measures at a limit, worked out by hand on the two-holes trace:
// 2K | 1K | 1K | 1K, free the 2K and the third, then 1K and 2K.
#include "sim/whatif/comparison.h"

#include "sim/scenario/scenario_run.h"

#include "sim/all_layers.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

constexpr char kTwoHolesTrace[] =
    "alloc 1 2048\nalloc 2 1024\nalloc 3 1024\nalloc 4 1024\nfree 1\nfree 3\nalloc 5 1024\nalloc 6 2048\n";

// Progress names each configuration as it starts and each of its verdicts:
// first_fit tries 13 limits on the two holes; best_fit fits at the peak live
// (5120): the bracket's first 4 (5120, 5376, 5632, 6400) and 5888, the one
// of the 3 above the answer not tried yet.
TEST(ComparisonTest, ProgressNamesEachConfigurationAndItsVerdicts) {
  const testing::TestTrace t = testing::TraceFromText(kTwoHolesTrace);
  std::vector<std::string> seen;
  SizeOptions options{256, 1};
  options.on_progress = [&seen](const SizeProgress& p) {
    seen.push_back(fmt::format("{}/{} {} {}", p.config, p.configs, p.config_label, p.limits_tried));
  };
  const std::vector<AllocatorConfig> configs = {testing::Config("first_fit"), testing::Config("best_fit")};
  ASSERT_TRUE(CompareAllocators(*t.scenario, t.survey, configs, std::nullopt, options).ok());
  std::vector<std::string> want;
  for (size_t n = 0; n <= 13; ++n) want.push_back(fmt::format("0/2 first_fit {}", n));
  for (size_t n = 0; n <= 5; ++n) want.push_back(fmt::format("1/2 best_fit {}", n));
  EXPECT_EQ(seen, want);
}

TEST(ComparisonTest, FirstFitAt6KFailsOnFragmentationWithEveryMeasureExact) {
  const testing::TestTrace t = testing::TraceFromText(kTwoHolesTrace);
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareAllocators(*t.scenario, t.survey, {testing::Config("first_fit"), testing::Config("best_fit")},
                        Bytes(6144), SizeOptions{});
  ASSERT_TRUE(rows.ok());
  const CompareRow& ff = (*rows)[0];
  EXPECT_EQ(ff.size.min_bytes_limit.value(), 7168u);
  ASSERT_TRUE(ff.at_limit.has_value());
  const AtLimit& m = *ff.at_limit;
  // Id 5 takes [0,1K); id 6 (2K) finds 1K at 1K, 1K at 3K and the 1K tail.
  EXPECT_EQ(m.failures, 1u);
  EXPECT_EQ(m.fragmentation, 1u);
  EXPECT_DOUBLE_EQ(*m.frag_at_first_failure, 2.0 / 3.0);
  // Peak in use is first reached by id 4 (5K); the 1K tail is all that is free.
  EXPECT_EQ(m.peak_bytes_in_use, 5120);
  EXPECT_DOUBLE_EQ(*m.frag_at_peak, 0.0);
  EXPECT_EQ(*m.peak_pool_bytes, 6144);
  EXPECT_DOUBLE_EQ(*m.utilization, 5120.0 / 6144.0);
  EXPECT_DOUBLE_EQ(*m.jw_at_peak_live, 0.2);  // pool 6K over 5K live
  const AtLimit& bf = *(*rows)[1].at_limit;
  EXPECT_EQ(bf.failures, 0u);
  EXPECT_FALSE(bf.frag_at_first_failure.has_value());
  const nlohmann::ordered_json j = CompareJson(*t.scenario, t.survey, LimitChoice{Bytes(6144), "--bytes-limit"}, *rows);
  EXPECT_EQ(j["rows"][0]["heap_minus_lower_bound"], 2048);
  EXPECT_EQ(j["rows"][1]["at_limit"]["fragmentation_at_first_failure"], nullptr);
}

// One replay takes both states compare measures: the stats right after the
// peak live event (the survey's) and right after the first alloc that brings
// bytes in use to the run's peak. Oracle: a replay that keeps the stats after
// every alloc, searched afterwards.
class EveryAlloc : public ReplayObserver {
 public:
  explicit EveryAlloc(const Allocator& a) : a_(a) {}
  void OnAlloc(EventIndex index, const Event&, const AllocResult& r) override {
    after_.push_back({index, r.ok(), a_.GetStats()});
  }
  struct After {
    EventIndex event;
    bool ok;
    AllocatorStats stats;
  };
  std::vector<After> after_;

 private:
  const Allocator& a_;
};

TEST(ComparisonTest, OneReplayTakesThePeakStatesAsEveryAllocSeesThem) {
  const testing::TestTrace t = testing::TraceFromText(testing::ChurnWithCap(5, 4000, 0.5, [](int i) {
    return static_cast<size_t>(30 + (i / 500) % 4 * 10);
  }));
  const uint64_t peak = t.peak_live_bytes().value();
  int checked = 0;
  for (const std::string policy : {"bfc", "torch", "cuda_async", "tpu", "first_fit", "best_fit", "paged", "ideal"}) {
    const TrialTarget target = testing::Target(t, testing::Config(policy));
    for (const uint64_t limit : {peak, peak * 11 / 10, peak * 2}) {
      const std::string where = fmt::format("{} at {}", policy, limit);
      TrialOptions options{false, t.survey.peak_live_event, true};
      absl::StatusOr<TrialResult> r = RunTrial(target, Bytes(limit), options);
      ASSERT_TRUE(r.ok()) << where;
      absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
          ScenarioRun::Prepare(*t.scenario, target.config, target.maker, Bytes(limit), ReplayOptions{});
      ASSERT_TRUE(run.ok()) << where;
      EveryAlloc oracle((*run)->policy());
      (*run)->engine().AddObserver(&oracle);
      ASSERT_TRUE((*run)->Run().ok()) << where;
      const int64_t top = (*run)->policy().GetStats().peak_bytes_in_use;
      EXPECT_EQ(r->final_stats.peak_bytes_in_use, top) << where;
      std::optional<AllocatorStats> at_top, at_live;
      for (const EveryAlloc::After& a : oracle.after_) {
        if (!at_top && a.ok && a.stats.bytes_in_use >= top) at_top = a.stats;
        if (a.event == t.survey.peak_live_event) at_live = a.stats;
      }
      ASSERT_EQ(r->in_use_target_stats.has_value(), at_top.has_value()) << where;
      if (at_top) {
        EXPECT_EQ(*r->in_use_target_stats, *at_top) << where;
      }
      ASSERT_TRUE(at_live.has_value()) << where;
      EXPECT_EQ(r->probe_stats, at_live) << where;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24);
}

// bfc's garbage collection never collects without growth: compare works the
// row out once, as the plain bfc row, and it is what the row gives alone.
// With growth it is a setting of its own.
TEST(ComparisonTest, ARowThatDecidesAsAnEarlierOneIsItsResult) {
  const AllocatorConfig plain = testing::Config("bfc");
  const AllocatorConfig gc = testing::Config("bfc", {"garbage_collection=true"});
  const AllocatorConfig growth_gc = testing::Config("bfc", {"allow_growth=true", "garbage_collection=true"});
  const OptionValues as_plain = plain.policy->DecidesAs(plain.options);
  EXPECT_EQ(gc.policy->DecidesAs(gc.options).entries(), as_plain.entries());
  EXPECT_EQ(*growth_gc.policy->DecidesAs(growth_gc.options).Get<bool>("garbage_collection"), true);

  const testing::TestTrace t = testing::TraceFromText(testing::ChurnWithCap(8, 6000, 0.5, [](int i) {
    return static_cast<size_t>(40 + (i / 700) % 3 * 15);
  }));
  const Bytes limit(t.peak_live_bytes().value() * 21 / 20);
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareAllocators(*t.scenario, t.survey, {plain, gc, growth_gc}, limit, SizeOptions{});
  absl::StatusOr<std::vector<CompareRow>> alone = CompareAllocators(*t.scenario, t.survey, {gc}, limit, SizeOptions{});
  ASSERT_TRUE(rows.ok() && alone.ok());
  for (const CompareRow* r : {&(*rows)[1], &(*alone)[0]}) {
    EXPECT_EQ(r->size.min_bytes_limit, (*rows)[0].size.min_bytes_limit);
    EXPECT_EQ(r->size.probes.size(), (*rows)[0].size.probes.size());
    EXPECT_EQ(r->size.at_answer.final_stats, (*rows)[0].size.at_answer.final_stats);
    ASSERT_TRUE(r->at_limit.has_value());
    EXPECT_EQ(r->at_limit->failures, (*rows)[0].at_limit->failures);
    EXPECT_EQ(r->at_limit->peak_bytes_in_use, (*rows)[0].at_limit->peak_bytes_in_use);
    EXPECT_EQ(r->at_limit->frag_at_peak, (*rows)[0].at_limit->frag_at_peak);
  }
  EXPECT_EQ((*rows)[1].config.options.entries(), gc.options.entries());  // the row is still its own
}

// torch's garbage_collection_threshold acts only under a per-process memory
// fraction: without one its row (PYTORCH_CUDA_ALLOC_CONF=
// garbage_collection_threshold:0.6 in torch's advice) is today's job's.
TEST(ComparisonTest, TorchsGarbageCollectionWithoutAFractionDecidesAsNone) {
  const AllocatorConfig plain = testing::Config("torch");
  const AllocatorConfig gc = testing::Config("torch", {"garbage_collection_threshold=0.6"});
  const AllocatorConfig fraction_gc =
      testing::Config("torch", {"per_process_memory_fraction=0.9", "garbage_collection_threshold=0.6"});
  EXPECT_EQ(gc.policy->DecidesAs(gc.options).entries(), plain.policy->DecidesAs(plain.options).entries());
  EXPECT_EQ(*fraction_gc.policy->DecidesAs(fraction_gc.options).Get<double>("garbage_collection_threshold"),
            0.6);

  const testing::TestTrace t = testing::TraceFromText(testing::ChurnWithCap(9, 6000, 0.5, [](int i) {
    return static_cast<size_t>(40 + (i / 700) % 3 * 15);
  }));
  const Bytes limit(t.peak_live_bytes().value() * 21 / 20);
  // Alone (nothing to take it from), it runs as plain torch does.
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareAllocators(*t.scenario, t.survey, {plain}, limit, SizeOptions{});
  absl::StatusOr<std::vector<CompareRow>> alone = CompareAllocators(*t.scenario, t.survey, {gc}, limit, SizeOptions{});
  ASSERT_TRUE(rows.ok() && alone.ok());
  EXPECT_EQ((*alone)[0].size.min_bytes_limit, (*rows)[0].size.min_bytes_limit);
  EXPECT_EQ((*alone)[0].size.probes.size(), (*rows)[0].size.probes.size());
  EXPECT_EQ((*alone)[0].size.at_answer.final_stats, (*rows)[0].size.at_answer.final_stats);
  ASSERT_TRUE((*alone)[0].at_limit.has_value());
  EXPECT_EQ((*alone)[0].at_limit->failures, (*rows)[0].at_limit->failures);
  EXPECT_EQ((*alone)[0].at_limit->peak_bytes_in_use, (*rows)[0].at_limit->peak_bytes_in_use);
}

}  // namespace
}  // namespace hbmsim
