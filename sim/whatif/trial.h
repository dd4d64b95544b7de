// One trial of `size` or `compare`: the very replay `hbmsim replay` runs
// (ScenarioRun: the same start state, recorded settings, device and
// empty_cache calls) at one limit, with an observer keeping what the search
// and the table need. A trial reads the recording afresh (Scenario::Events),
// so memory stays what one replay needs, however long the trace.
#ifndef HBMSIM_SIM_WHATIF_TRIAL_H_
#define HBMSIM_SIM_WHATIF_TRIAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/scenario.h"
#include "sim/engine/event_log.h"

namespace hbmsim::sim {

// What one pass over the scenario with no limit says: the peak live bytes
// (the lower bound every search starts from) and the events replayed.
struct ScenarioSurvey {
  Bytes peak_live_bytes;
  std::optional<EventIndex> peak_live_event;
  uint64_t events_read = 0;
  uint64_t events_replayed = 0;
  std::optional<DeviceId> device;
  // The events, when asked for and loggable (sim/engine/event_log.h).
  std::shared_ptr<const EventLog> events;
};
struct SurveyOptions {
  // Keep the events in memory for the trials (SharedTrials::MayShare says
  // when they will use them): one read of the recording instead of two.
  bool keep_events = false;
  // Keep them in this log (NewGrowingLog), which another thread may read
  // while it grows (EarlyLeader, sim/whatif/checkpoints.h); implies keep_events.
  std::shared_ptr<EventLog> log = nullptr;
  // Follows the survey's events (a progress line); may be nullptr.
  ReplayObserver* observer = nullptr;
};
absl::StatusOr<ScenarioSurvey> SurveyScenario(const Scenario& scenario, const SurveyOptions& options = {});

// What every trial of one (scenario, allocator) shares.
struct TrialTarget {
  const Scenario* scenario = nullptr;
  AllocatorConfig config;  // the recording's settings and the user's edits applied
  LimitedFactory maker;    // a planning policy's plan, made once
  ScenarioSurvey survey;
};
// Errors: the maker's (bad options, an unreadable recording).
absl::StatusOr<TrialTarget> MakeTrialTarget(const Scenario& scenario, const AllocatorConfig& config,
                                            const ScenarioSurvey& survey);

struct TrialOptions {
  bool stop_at_first_failure = true;  // `--on-oom stop`: enough to know pass/fail
  // GetStats() right after this event (compare: at the peak live bytes).
  std::optional<EventIndex> probe_event;
  // GetStats() right after the first alloc that brings bytes in use to the
  // run's peak (final_stats.peak_bytes_in_use; compare: the state at the peak
  // bytes in use): TrialResult::in_use_target_stats.
  bool peak_in_use_stats = false;
  // When set and it turns true, the trial may give up with CancelledError
  // (the size search's speculative probes). Only shared trials look at it,
  // once per checkpoint stride, and not with a stride or less left to
  // replay (sim/whatif/checkpoints.h).
  const std::atomic<bool>* cancel = nullptr;
  // The caller needs only whether the trial fits (ok(): the size search's
  // probes). A shared trial may then stop where it meets a finished one
  // (sim/whatif/reconvergence.h) and take its verdict; see TrialResult::met.
  bool verdict_only = false;
};

struct TrialFailure {
  uint64_t event = 0;  // index in the file
  Bytes rounded;
  AllocStatus kind = AllocStatus::kOom;
  Bytes free_bytes;
  Bytes largest_free_block;
};

struct TrialResult {
  uint64_t failures = 0;
  uint64_t oom = 0;
  uint64_t fragmentation = 0;
  std::optional<TrialFailure> first_failure;
  AllocatorStats final_stats;
  std::optional<AllocatorStats> probe_stats;
  std::optional<AllocatorStats> in_use_target_stats;
  ReplaySummary summary;
  // TrialOptions::verdict_only: the trial stopped where it met a finished
  // one. Then only `failures` (so ok()) is the whole trial's; oom,
  // fragmentation and first_failure are unset, stats and summary are of the
  // events it replayed.
  bool met = false;

  bool ok() const { return failures == 0; }
  // A failed request of the trial: counted by verdict, the first one kept.
  void Count(const FailureRecord& f);
};

// Errors: the maker's, the recording's, or a broken invariant (InternalError).
absl::StatusOr<TrialResult> RunTrial(const TrialTarget& target, Bytes limit, const TrialOptions& options);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_TRIAL_H_
