// Shared trials (sim/whatif/checkpoints.h) give exactly what a trial of its
// own gives: for many limits, a trial resumed from a checkpoint of another
// limit has the same failures, first failure, final stats and summary as a
// fresh RunTrial; and `size` with sharing has the same answer, probes,
// non_monotonic and run at the answer as without.
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "allocator/bfc/bfc_allocator.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/comparison.h"
#include "tests/common/sanitized_build.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

using testing::ExpectResumedIsFresh;
using testing::ExpectSame;
using testing::ExpectSameSearch;

// Churn with a drifting working set: limits near the peak fail at different
// events and diverge from each other at different events.
std::string ChurnTrace(uint64_t seed, int events) {
  return testing::ChurnWithCap(seed, events, 0.5, [](int i) {
    return static_cast<size_t>(60 + static_cast<int64_t>(50 * std::sin(i / 3000.0)));  // 10..110
  });
}

// The policies and options that keep limit windows: bfc with and without
// growth (a growing pool's windows start at the Extend the limit cuts short),
// torch, bfc with garbage collection but no growth (which never collects),
// cuda_async, torch with expandable segments (its ranges sized by the limit),
// bfc with growth and garbage collection (TensorFlow's GPU allocator under
// allow_growth: windowed until a collection runs).
std::vector<AllocatorConfig> WindowedConfigs() {
  return {testing::Config("bfc"), testing::Config("bfc", {"allow_growth=true"}),
          testing::Config("bfc", {"allow_growth=true", "region_coalescing=true"}), testing::Config("torch"),
          testing::Config("bfc", {"garbage_collection=true"}), testing::Config("cuda_async"),
          testing::Config("torch", {"expandable_segments=true"}),
          testing::Config("bfc", {"allow_growth=true", "garbage_collection=true", "region_coalescing=true"}),
          testing::Config("bfc", {"allow_growth=true", "garbage_collection=true"})};
}

// Each option set with its seeds: three for each policy; growth's two
// option sets share them. Under the sanitizers, each set's first seed
// (tests/common/sanitized_build.h).
std::vector<std::pair<AllocatorConfig, uint64_t>> ConfigsWithSeeds() {
  const std::vector<AllocatorConfig> configs = WindowedConfigs();
  const std::vector<std::pair<size_t, uint64_t>> all = {{0, 1}, {0, 2}, {0, 3}, {1, 1}, {1, 2}, {2, 3},
                                                        {3, 1}, {3, 2}, {3, 3}, {4, 2}, {5, 1}, {5, 3},
                                                        {6, 1}, {6, 2}, {7, 1}, {7, 2}, {8, 3}};
  std::vector<std::pair<AllocatorConfig, uint64_t>> out;
  for (size_t i = 0; i < all.size(); ++i) {
    const bool first_of_its_set = i == 0 || all[i - 1].first != all[i].first;
    if (first_of_its_set || !testing::kSanitizedBuild) out.emplace_back(configs[all[i].first], all[i].second);
  }
  return out;
}

TEST(SharedTrialsTest, AResumedTrialIsAFreshOneForManyLimits) {
  for (const auto& [config, seed] : ConfigsWithSeeds()) {
    const std::string policy = RowLabel(config);
    const testing::TestTrace t = testing::TraceFromText(ChurnTrace(seed, 20000));
    const TrialTarget target = testing::Target(t, config);
    std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
    ASSERT_NE(shared, nullptr);
    const uint64_t peak = t.peak_live_bytes().value();
    // Descending, then ascending: later trials resume from earlier ones'
    // checkpoints. About 90 limits, 15 under the sanitizers.
    const uint64_t coarser = testing::ForThisBuild<uint64_t>(1, 6);
    std::vector<uint64_t> limits;
    for (uint64_t l = 3 * peak; l >= peak; l -= coarser * (peak / 47 + 1)) limits.push_back(l);
    for (uint64_t l = peak; l <= 3 * peak; l += coarser * (peak / 43 + 256)) limits.push_back(l);
    for (const uint64_t l : limits) {
      ExpectResumedIsFresh(target, *shared, Bytes(l), fmt::format("{} seed {}", policy, seed));
    }
    // The comparison above is worth something only if trials did resume.
    EXPECT_GT(shared->resumed(), limits.size()) << policy << " seed " << seed;
  }
}

// CloneAt(L) after some events is the state a run at L has after them.
TEST(SharedTrialsTest, BfcCloneAtIsTheRunAtThatLimit) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<uint64_t, uint64_t>> ops;  // (id, bytes) allocs; bytes 0 = free of id
  BfcOptions options;
  options.memory_limit = Bytes::MiB(64);
  BfcAllocator a(options);
  BfcAllocator untracked(options);
  ASSERT_TRUE(a.TrackLimitWindow());
  std::vector<Handle> live;
  for (int i = 0; i < 3000; ++i) {
    if (!live.empty() && rng() % 2 == 0) {
      const size_t k = rng() % live.size();
      a.Free(live[k]);
      live[k] = live.back();
      live.pop_back();
    } else {
      AllocRequest r;
      r.bytes = Bytes(256 + rng() % 200000);
      const AllocResult res = a.Allocate(r);
      ASSERT_TRUE(res.ok());
      live.push_back(res.handle);
      if (i < 10) untracked.Allocate(r);
    }
  }
  // A replay that never asked keeps no window; one that did keeps a real one.
  EXPECT_EQ(untracked.limit_window(), (LimitWindow{Bytes::MiB(64), Bytes::MiB(64)}));
  const LimitWindow w = a.limit_window();
  ASSERT_LT(w.lo, Bytes::MiB(64));
  ASSERT_GE(w.hi, Bytes::MiB(64));
  for (const Bytes l : {w.lo, w.lo + Bytes(1000), Bytes::MiB(64), Bytes::MiB(100)}) {
    if (!w.Contains(l)) continue;
    std::unique_ptr<Allocator> c = a.CloneAt(l);
    EXPECT_TRUE(c->CheckInvariants().ok());
    EXPECT_EQ(c->GetStats().bytes_limit, StatBytes(l));
    EXPECT_EQ(*c->GetStats().pool_bytes, static_cast<int64_t>(l.RoundDown(256).value()));
  }
}

// A growing pool: each Extend bounds the window by the pool it grows (the
// limit must hold the request, and the whole curr for a region of its own);
// the first Extend curr does not fit cuts a region of limit - pool, the tail,
// and CloneAt resizes it. Offsets and stats after it are a fresh run's.
TEST(SharedTrialsTest, BfcGrowthWindowsFollowTheExtends) {
  const auto run = [](BfcAllocator& a, const std::vector<uint64_t>& mib) {
    std::vector<uint64_t> offsets;
    for (const uint64_t m : mib) {
      AllocRequest r;
      r.bytes = Bytes::MiB(m);
      const AllocResult res = a.Allocate(r);
      offsets.push_back(res.ok() ? res.offset.value() : ~uint64_t{0});
    }
    return offsets;
  };
  BfcOptions options;
  options.allow_growth = true;
  options.memory_limit = Bytes::MiB(24);
  BfcAllocator a(options);
  ASSERT_TRUE(a.TrackLimitWindow());
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes::MiB(2), Bytes::Max()}));
  run(a, {1});  // a region of 2 MiB: the limit holds 1 MiB, and the 2 MiB of curr
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes::MiB(2), Bytes::Max()}));
  run(a, {3, 5});  // regions of curr, 4 and 8 MiB, each handed out whole: pool 14 MiB
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes::MiB(14), Bytes::Max()}));
  // No free chunk holds 4 MiB (1 MiB is free); curr, 16 MiB, does
  // not fit below the limit: a region of 24 - 14 MiB, split (it is at least
  // twice 4 MiB under limits of 22 MiB and more); its rest is the tail.
  run(a, {4});
  EXPECT_EQ(a.limit_window(), (LimitWindow{Bytes::MiB(22), Bytes::MiB(30) - Bytes(1)}));
  EXPECT_EQ(*a.GetStats().pool_bytes, static_cast<int64_t>(Bytes::MiB(24).value()));

  const Bytes at = Bytes::MiB(26) + Bytes(300);  // floor256: 26 MiB + 256 B
  ASSERT_TRUE(a.limit_window().Contains(at));
  std::unique_ptr<Allocator> clone = a.CloneAt(at);
  ASSERT_TRUE(clone->CheckInvariants().ok());
  options.memory_limit = at;
  BfcAllocator fresh(options);
  run(fresh, {1, 3, 5, 4});
  EXPECT_EQ(clone->GetStats(), fresh.GetStats());
  // The tail is now 8 MiB + 256 B, the only chunk to hold 6 MiB, handed out
  // whole (at 24 MiB it was 6 MiB); 1 MiB goes to the first region's free
  // MiB; then nothing is free and no Extend fits: 4 MiB fails.
  const std::vector<uint64_t> later = {6, 1, 4};
  const std::vector<uint64_t> expected = {Bytes::MiB(18).value(), Bytes::MiB(1).value(), ~uint64_t{0}};
  auto& c = static_cast<BfcAllocator&>(*clone);
  EXPECT_EQ(run(c, later), expected);
  EXPECT_EQ(run(fresh, later), expected);
  EXPECT_EQ(c.GetStats(), fresh.GetStats());
  EXPECT_EQ(c.GetStats().pool_bytes, StatBytes(at.RoundDown(256)));
  EXPECT_EQ(c.GetStats().peak_bytes_in_use, StatBytes(Bytes::MiB(26) + Bytes(256)));  // 1 + 4 + 8 + 4 + 8 MiB + 256 B + 1

  // Below 2 MiB growth starts at the limit itself: no window.
  options.memory_limit = Bytes::MiB(1);
  BfcAllocator small(options);
  ASSERT_TRUE(small.TrackLimitWindow());
  EXPECT_EQ(small.limit_window(), (LimitWindow{Bytes::MiB(1), Bytes::MiB(1)}));
}

TEST(SharedTrialsTest, SizeIsTheSameWithAndWithoutSharing) {
  for (const AllocatorConfig& config : WindowedConfigs())
  for (uint64_t seed : testing::SpreadForThisBuild<uint64_t>({4, 5, 6, 7}, 1)) {
    const std::string policy = RowLabel(config);
    // Half the events under the sanitizers: the same search steps, on a shorter churn.
    const testing::TestTrace t = testing::TraceFromText(ChurnTrace(seed, testing::ForThisBuild(30000, 15000)));
    for (const uint64_t resolution : {256, 4096}) {
      const TrialTarget target = testing::Target(t, config);
      absl::StatusOr<SizeResult> with = FindMinLimit(target, SizeOptions{resolution, 2, true});
      absl::StatusOr<SizeResult> without = FindMinLimit(target, SizeOptions{resolution, 2, false});
      // As `hbmsim size` runs it: the survey kept the events for the trials.
      testing::TestTrace kept = t;
      kept.survey = *SurveyScenario(*t.scenario, SurveyOptions{true});
      ASSERT_NE(kept.survey.events, nullptr);
      absl::StatusOr<SizeResult> logged = FindMinLimit(testing::Target(kept, config), SizeOptions{resolution, 2, true});
      ASSERT_TRUE(with.ok() && without.ok() && logged.ok());
      EXPECT_TRUE(logged->trials_shared);
      EXPECT_EQ(logged->min_bytes_limit, without->min_bytes_limit);
      EXPECT_EQ(logged->probes.size(), without->probes.size());
      ExpectSame(logged->at_answer, without->at_answer, "survey's log");
      ExpectSameSearch(*with, *without, fmt::format("{} seed {} resolution {}", policy, seed, resolution));
    }
  }
}

// With more threads than a round has probes, the search runs probes ahead
// of itself and calls off those above a new pass (size_search.h); what it
// reports is still what one thread finds.
TEST(SharedTrialsTest, SizeIsTheSameWhateverTheJobs) {
  for (const AllocatorConfig& config : WindowedConfigs())
  for (uint64_t seed : testing::SpreadForThisBuild<uint64_t>({4, 8, 9}, 1)) {
    const std::string policy = RowLabel(config);
    const testing::TestTrace t = testing::TraceFromText(ChurnTrace(seed, 30000));
    const TrialTarget target = testing::Target(t, config);
    absl::StatusOr<SizeResult> one = FindMinLimit(target, SizeOptions{256, 1, true});
    ASSERT_TRUE(one.ok());
    for (const int jobs : {2, 3, 7}) {
      const std::string where = fmt::format("{} seed {} jobs {}", policy, seed, jobs);
      absl::StatusOr<SizeResult> many = FindMinLimit(target, SizeOptions{256, jobs, true});
      ASSERT_TRUE(many.ok()) << where;
      ExpectSameSearch(*many, *one, where);
    }
  }
}

// A trial whose flag is up gives up at its first checkpoint stride; one
// whose flag stays down is the trial it would have been.
TEST(SharedTrialsTest, ACancelledTrialSaysSo) {
  const testing::TestTrace t = testing::TraceFromText(ChurnTrace(3, 20000));
  const TrialTarget target = testing::Target(t, testing::Config("bfc"));
  std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
  ASSERT_NE(shared, nullptr);
  const Bytes limit = target.survey.peak_live_bytes + Bytes(4096);
  std::atomic<bool> flag{true};
  TrialOptions cancelled;
  cancelled.cancel = &flag;
  const absl::StatusOr<TrialResult> gone = shared->Run(limit, cancelled);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(absl::IsCancelled(gone.status())) << gone.status();
  flag = false;
  const absl::StatusOr<TrialResult> kept = shared->Run(limit, cancelled);
  const absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, TrialOptions{});
  ASSERT_TRUE(kept.ok() && fresh.ok());
  ExpectSame(*kept, *fresh, "flag down");
}

// The leader replayed behind the survey, as `hbmsim size` runs it on two
// cores: its checkpoints give every trial what a trial of its own gives, and
// `size`'s whole path (SizeScenario) finds what the search without sharing finds.
TEST(SharedTrialsTest, AnEarlyLeaderChangesNothing) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: no early leader";
  for (const std::string policy : {"bfc", "torch"})
  for (uint64_t seed : {4, 5}) {
    const std::string where = fmt::format("{} seed {}", policy, seed);
    const testing::TestTrace t = testing::TraceFromText(ChurnTrace(seed, 30000));
    std::unique_ptr<EarlyLeader> early = EarlyLeader::Start(*t.scenario, testing::Config(policy));
    ASSERT_NE(early, nullptr) << where;
    testing::TestTrace kept = t;
    kept.survey = *SurveyScenario(*t.scenario, SurveyOptions{true, early->log()});
    ASSERT_EQ(kept.survey.events, early->log()) << where;
    const TrialTarget target = testing::Target(kept, testing::Config(policy));
    std::unique_ptr<SharedTrials> shared = early->Finish(target);
    ASSERT_NE(shared, nullptr) << where;
    EXPECT_EQ(shared->trials(), 1u) << where;  // the leader
    EXPECT_EQ(shared->events(), t.survey.events_read) << where;
    for (uint64_t eighths = 8; eighths <= 24; eighths += 2) {  // 1x .. 3x the peak
      const Bytes limit(t.peak_live_bytes().value() / 8 * eighths);
      const absl::StatusOr<TrialResult> resumed = shared->Run(limit, TrialOptions{});
      const absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, TrialOptions{});
      ASSERT_TRUE(resumed.ok() && fresh.ok()) << where;
      ExpectSame(*resumed, *fresh, fmt::format("{} limit {}", where, limit.value()));
    }
    EXPECT_GT(shared->resumed(), 0u) << where;  // from the leader's checkpoints
    absl::StatusOr<SizedScenario> sized = SizeScenario(*t.scenario, testing::Config(policy), SizeOptions{256, 2, true});
    absl::StatusOr<SizeResult> without =
        FindMinLimit(testing::Target(t, testing::Config(policy)), SizeOptions{256, 2, false});
    ASSERT_TRUE(sized.ok() && without.ok()) << where;
    EXPECT_TRUE(sized->result.trials_shared) << where;
    EXPECT_EQ(sized->target.survey.peak_live_bytes, t.peak_live_bytes()) << where;
    ExpectSameSearch(sized->result, *without, where);
  }
}

// The survey numbers the buffers of the device it replays (event_log.h):
// with deferred frees, another device's buffers (not numbered, skipped) whose
// ids equal the numbers, and programs (which keep their ids) in the trace,
// `size` through the numbered log finds what trials reading the text find,
// and every resumed trial is the fresh one.
TEST(SharedTrialsTest, NumberedBuffersChangeNoTrial) {
  std::mt19937_64 rng(11);
  std::string text;
  std::vector<uint64_t> live;
  for (uint64_t next = 1; next < 12000; ++next) {
    if (live.size() > 40 || (!live.empty() && rng() % 2 == 0)) {
      const size_t i = rng() % live.size();
      text += rng() % 3 == 0 ? fmt::format("free_requested {0}\nfree_completed {0}\n", live[i])
                             : fmt::format("free {}\n", live[i]);
      live[i] = live.back();
      live.pop_back();
    } else {
      const uint64_t id = 1000 + next;  // above the numbers, below device 1's ids
      text += fmt::format("alloc {} {}\n", id, 256 * (1 + rng() % 4000));
      live.push_back(id);
    }
    if (next % 97 == 0) text += fmt::format("alloc {0} 4096 device=1\nfree {0} device=1\n", next % 50);
    if (next % 1001 == 0) text += fmt::format("program_load {0} 65536\nprogram_unload {0}\n", next % 7);
  }
  const testing::TestTrace t = testing::TraceFromText(text);
  testing::TestTrace kept = t;
  kept.survey = *SurveyScenario(*t.scenario, SurveyOptions{true});
  ASSERT_NE(kept.survey.events, nullptr);
  ASSERT_TRUE(kept.survey.events->ids_numbered);
  for (const std::string policy : {"bfc", "torch"}) {
    const TrialTarget target = testing::Target(kept, testing::Config(policy));
    std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
    ASSERT_NE(shared, nullptr) << policy;
    for (uint64_t eighths = 8; eighths <= 16; ++eighths) {
      const Bytes limit(t.peak_live_bytes().value() / 8 * eighths);
      const absl::StatusOr<TrialResult> resumed = shared->Run(limit, TrialOptions{});
      const absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, TrialOptions{});
      ASSERT_TRUE(resumed.ok() && fresh.ok()) << policy << " " << limit.value();
      ExpectSame(*resumed, *fresh, fmt::format("{} limit {}", policy, limit.value()));
    }
    EXPECT_GT(shared->resumed(), 0u) << policy;
    // The leader and the 9: none fell back to reading the text (which a
    // number the engine refused would make it do).
    EXPECT_EQ(shared->trials(), 10u) << policy;
    absl::StatusOr<SizeResult> logged = FindMinLimit(target, SizeOptions{256, 2, true});
    absl::StatusOr<SizeResult> without = FindMinLimit(testing::Target(t, testing::Config(policy)),
                                                      SizeOptions{256, 2, false});
    ASSERT_TRUE(logged.ok() && without.ok()) << policy;
    EXPECT_TRUE(logged->trials_shared) << policy;
    ExpectSameSearch(*logged, *without, policy);
    ExpectSame(logged->at_answer, without->at_answer, policy);
  }
}

// Events a compact record cannot hold (bytes of 4 GiB or more, a lane past
// 255, a trace id past 2^20 where the buffers are not numbered) go to wide
// records (event_log.h); trials read them back as they were, through the
// survey's numbered log and through a log of the trace's own ids alike.
TEST(SharedTrialsTest, WideRecordsChangeNoTrial) {
  std::mt19937_64 rng(5);
  std::string text;
  std::vector<std::pair<uint64_t, uint64_t>> live;  // id, stream
  for (uint64_t next = 1; next < 6000; ++next) {
    if (live.size() > 40 || (!live.empty() && rng() % 2 == 0)) {
      const size_t i = rng() % live.size();
      text += fmt::format("free {} stream={}\n", live[i].first, live[i].second);
      live[i] = live.back();
      live.pop_back();
    } else {
      const uint64_t id = 5'000'000 + next;
      const uint64_t bytes = next % 53 == 0 ? (uint64_t{1} << 32) + 256 * (rng() % 64) : 256 * (1 + rng() % 4000);
      const uint64_t stream = next % 7 == 0 ? rng() % 300 : 0;
      text += fmt::format("alloc {} {} stream={}\n", id, bytes, stream);
      live.emplace_back(id, stream);
    }
  }
  const testing::TestTrace t = testing::TraceFromText(text);
  testing::TestTrace kept = t;
  kept.survey = *SurveyScenario(*t.scenario, SurveyOptions{true});
  ASSERT_NE(kept.survey.events, nullptr);
  EXPECT_GT(kept.survey.events->wide.size(), 50u);  // the large ones and the high lanes
  EXPECT_LT(kept.survey.events->wide.size(), 1000u);  // not the numbered ids
  for (const std::string policy : {"bfc", "torch"}) {
    const testing::TestTrace* sources[] = {&kept, &t};  // the survey's log; one read with the trace's ids
    for (const testing::TestTrace* from : sources) {
      const TrialTarget target = testing::Target(*from, testing::Config(policy));
      std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
      ASSERT_NE(shared, nullptr) << policy;
      for (uint64_t eighths = 8; eighths <= 16; eighths += 2) {
        const Bytes limit(t.peak_live_bytes().value() / 8 * eighths);
        const absl::StatusOr<TrialResult> shared_run = shared->Run(limit, TrialOptions{});
        const absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, TrialOptions{});
        ASSERT_TRUE(shared_run.ok() && fresh.ok()) << policy << " " << limit.value();
        ExpectSame(*shared_run, *fresh, fmt::format("{} limit {}", policy, limit.value()));
      }
      EXPECT_EQ(shared->trials(), 6u) << policy;  // the leader and the 5, none from the text
    }
  }
}

// A leader whose survey never came, or filled another log, or could not log
// the events, gives nothing to use, and nothing is left waiting.
TEST(SharedTrialsTest, AnEarlyLeaderWithoutItsLogGivesNothing) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: no early leader";
  const testing::TestTrace t = testing::TraceFromText(ChurnTrace(6, 5000));
  { std::unique_ptr<EarlyLeader> never = EarlyLeader::Start(*t.scenario, testing::Config("bfc")); }
  std::unique_ptr<EarlyLeader> other = EarlyLeader::Start(*t.scenario, testing::Config("bfc"));
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->Finish(testing::Target(t, testing::Config("bfc"))), nullptr);  // t's survey kept no log
  // Shapes are more than a log record holds: the survey drops the log.
  const testing::TestTrace shaped = testing::TraceFromText("alloc 1 4096 shape=f32[1024]\nfree 1\n");
  std::unique_ptr<EarlyLeader> dropped = EarlyLeader::Start(*shaped.scenario, testing::Config("bfc"));
  ASSERT_NE(dropped, nullptr);
  testing::TestTrace kept = shaped;
  kept.survey = *SurveyScenario(*shaped.scenario, SurveyOptions{true, dropped->log()});
  EXPECT_EQ(kept.survey.events, nullptr);
  EXPECT_EQ(dropped->Finish(testing::Target(kept, testing::Config("bfc"))), nullptr);
  EXPECT_TRUE(FindMinLimit(testing::Target(kept, testing::Config("bfc")), SizeOptions{256, 2, true}).ok());
}

// Policies without limit windows (and bfc with options it keeps none for)
// share only the log: no leader, no checkpoint; each trial replays the
// events from memory from the first one, and is the trial RunTrial runs on
// the recording, as `size` is.
TEST(SharedTrialsTest, WithoutWindowsOnlyTheLogIsShared) {
  const testing::TestTrace t = testing::TraceFromText(ChurnTrace(1, 5000));
  BfcOptions fraction;
  fraction.memory_limit = Bytes::MiB(64);
  fraction.fragmentation_fraction = 0.5;
  EXPECT_FALSE(BfcAllocator(fraction).TrackLimitWindow());
  const std::vector<AllocatorConfig> log_only = {
      testing::Config("best_fit"), testing::Config("bfc", {"fragmentation_fraction=0.5"}),
      testing::Config("torch", {"per_process_memory_fraction=0.9"}),
      testing::Config("cuda_async", {"preallocate=true"}), testing::Config("first_fit"), testing::Config("paged")};
  for (const AllocatorConfig& config : log_only) {
    const std::string where = RowLabel(config);
    const TrialTarget target = testing::Target(t, config);
    std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
    ASSERT_NE(shared, nullptr) << where;
    EXPECT_FALSE(shared->resumes()) << where;
    for (uint64_t eighths = 8; eighths <= 16; eighths += 2) {
      const Bytes limit(t.peak_live_bytes().value() / 8 * eighths);
      for (const bool stop : {true, false}) {
        const absl::StatusOr<TrialResult> logged = shared->Run(limit, TrialOptions{stop, {}, {}});
        const absl::StatusOr<TrialResult> fresh = RunTrial(target, limit, TrialOptions{stop, {}, {}});
        ASSERT_TRUE(logged.ok() && fresh.ok()) << where;
        ExpectSame(*logged, *fresh, fmt::format("{} limit {} stop {}", where, limit.value(), stop));
      }
    }
    EXPECT_EQ(shared->resumed(), 0u) << where;
    absl::StatusOr<SizedScenario> sized = SizeScenario(*t.scenario, config, SizeOptions{256, 2, true});
    absl::StatusOr<SizeResult> without = FindMinLimit(target, SizeOptions{256, 2, false});
    ASSERT_TRUE(sized.ok() && without.ok()) << where;
    EXPECT_TRUE(sized->result.trials_shared) << where;
    EXPECT_FALSE(sized->result.trials_resume) << where;
    ExpectSameSearch(sized->result, *without, where);
  }
  std::unique_ptr<SharedTrials> windows = SharedTrials::Make(testing::Target(t, testing::Config("bfc")));
  ASSERT_NE(windows, nullptr);
  EXPECT_TRUE(windows->resumes());
}

}  // namespace
}  // namespace hbmsim
