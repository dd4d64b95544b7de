// Helpers for what-if tests: a scenario from trace text, and a brute-force
// scan of pass/fail over a grid of limits (the oracle for the size search).
#ifndef HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_
#define HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/size_search.h"

namespace hbmsim::testing {

// A scenario and its survey, as `size` and `compare` make them.
struct TestTrace {
  std::shared_ptr<const std::string> file;  // removed when the last copy goes
  std::shared_ptr<Scenario> scenario;
  ScenarioSurvey survey;
  Bytes peak_live_bytes() const { return survey.peak_live_bytes; }
};

inline TestTrace TraceFromText(const std::string& text) {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  // Unique to this process and call: trials reopen the file, so it must hold
  // this text for as long as the scenario lives, whatever else runs.
  static int calls = 0;
  const std::string path = ::testing::TempDir() + "/hbmsim_whatif_" + (t ? t->name() : "x") + "_" +
                           std::to_string(getpid()) + "_" + std::to_string(++calls) + ".trace";
  std::ofstream(path, std::ios::binary) << "# hbmsim-trace v1\n" << text;
  std::shared_ptr<const std::string> file(new std::string(path), [](const std::string* p) {
    std::remove(p->c_str());
    delete p;
  });
  absl::StatusOr<Scenario> s = OpenScenario(path, ScenarioRequest{});
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  TestTrace out{file, std::make_shared<Scenario>(*std::move(s)), {}};
  absl::StatusOr<ScenarioSurvey> survey = SurveyScenario(*out.scenario);
  EXPECT_TRUE(survey.ok()) << survey.status().message();
  if (survey.ok()) out.survey = *survey;
  return out;
}

// Text of a churn trace whose live set is held near cap(i) at event i: a
// free (of a random live buffer) when above it, else a free with odds
// `free_odds` or an alloc of log-uniform 256 B..1 MiB. Seeded.
template <typename Cap>
std::string ChurnWithCap(uint64_t seed, int events, double free_odds, Cap cap) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::string text;
  std::vector<uint64_t> live;
  uint64_t next = 1;
  for (int i = 0; i < events; ++i) {
    if (!live.empty() && (live.size() > cap(i) || unit(rng) < free_odds)) {
      const size_t k = rng() % live.size();
      text += fmt::format("free {}\n", live[k]);
      live[k] = live.back();
      live.pop_back();
    } else {
      text += fmt::format("alloc {} {}\n", next, static_cast<uint64_t>(std::exp2(8 + 12 * unit(rng))));
      live.push_back(next++);
    }
  }
  return text;
}

inline AllocatorConfig Config(const std::string& name, const std::vector<std::string>& sets = {}) {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), name);
  EXPECT_TRUE(c.ok());
  for (const std::string& kv : sets) EXPECT_TRUE(ApplySetOption(*c, kv).ok()) << kv;
  return *c;
}

inline TrialTarget Target(const TestTrace& t, const AllocatorConfig& c) {
  absl::StatusOr<TrialTarget> target = MakeTrialTarget(*t.scenario, c, t.survey);
  EXPECT_TRUE(target.ok()) << target.status().message();
  return target.ok() ? *std::move(target) : TrialTarget{};
}

inline SizeResult Size(const TestTrace& t, const AllocatorConfig& c, uint64_t resolution = 256, int jobs = 1) {
  absl::StatusOr<SizeResult> r = FindMinLimit(Target(t, c), SizeOptions{resolution, jobs});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SizeResult{};
}

inline bool Fits(const TestTrace& t, const AllocatorConfig& c, uint64_t limit) {
  absl::StatusOr<TrialResult> r = RunTrial(Target(t, c), Bytes(limit), TrialOptions{});
  return r.ok() && r->ok();
}

inline void ExpectSame(const TrialResult& a, const TrialResult& b, const std::string& where) {
  EXPECT_EQ(a.failures, b.failures) << where;
  EXPECT_EQ(a.oom, b.oom) << where;
  EXPECT_EQ(a.fragmentation, b.fragmentation) << where;
  ASSERT_EQ(a.first_failure.has_value(), b.first_failure.has_value()) << where;
  if (a.first_failure) {
    EXPECT_EQ(a.first_failure->event, b.first_failure->event) << where;
    EXPECT_EQ(a.first_failure->rounded, b.first_failure->rounded) << where;
    EXPECT_EQ(a.first_failure->kind, b.first_failure->kind) << where;
    EXPECT_EQ(a.first_failure->free_bytes, b.first_failure->free_bytes) << where;
    EXPECT_EQ(a.first_failure->largest_free_block, b.first_failure->largest_free_block) << where;
  }
  EXPECT_EQ(a.final_stats, b.final_stats) << where;
  EXPECT_EQ(a.summary.events_read, b.summary.events_read) << where;
  EXPECT_EQ(a.summary.events_replayed, b.summary.events_replayed) << where;
  EXPECT_EQ(a.summary.allocs, b.summary.allocs) << where;
  EXPECT_EQ(a.summary.failures, b.summary.failures) << where;
  EXPECT_EQ(a.summary.ignored_frees, b.summary.ignored_frees) << where;
  EXPECT_EQ(a.summary.peak_live_bytes, b.summary.peak_live_bytes) << where;
  EXPECT_EQ(a.summary.peak_live_event, b.summary.peak_live_event) << where;
  EXPECT_EQ(a.summary.stopped_at_failure, b.summary.stopped_at_failure) << where;
}

// A shared trial at `limit` (resumed from a checkpoint where one serves it)
// is a fresh RunTrial, stopping at the first failure or not.
inline void ExpectResumedIsFresh(const TrialTarget& target, SharedTrials& shared, Bytes limit, const std::string& where) {
  for (const bool stop : {true, false}) {
    TrialOptions o;
    o.stop_at_first_failure = stop;
    absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, o);
    absl::StatusOr<TrialResult> resumed = shared.Run(limit, o);
    ASSERT_TRUE(fresh.ok() && resumed.ok()) << where;
    ExpectSame(*resumed, *fresh, fmt::format("{} limit {} stop {}", where, limit.value(), stop));
  }
}

// The same answer, non_monotonic, probes (limit and verdict) and run at the answer.
inline void ExpectSameSearch(const SizeResult& a, const SizeResult& b, const std::string& where) {
  EXPECT_EQ(a.min_bytes_limit, b.min_bytes_limit) << where;
  EXPECT_EQ(a.non_monotonic, b.non_monotonic) << where;
  ASSERT_EQ(a.probes.size(), b.probes.size()) << where;
  for (size_t i = 0; i < a.probes.size(); ++i) {
    EXPECT_EQ(a.probes[i].limit, b.probes[i].limit) << where;
    EXPECT_EQ(a.probes[i].ok, b.probes[i].ok) << where;
  }
  ExpectSame(a.at_answer, b.at_answer, where);
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_
