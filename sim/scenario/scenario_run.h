// One replay of a Scenario: the function every command runs (replay, each
// trial of size, each row of compare, --check-recorded), so they all give the
// same answer for the same allocator and limit.
//
//   Prepare   build the policy at the limit; install the start state
//             (StartStateMode::kSeed and a policy with a seed hook) or refuse
//             it when its reserved bytes exceed the limit; open a fresh
//             stream of the device's events; watch a recording that records
//             its device calls, or under --check-recorded the figures its
//             allocator reported (RecordingChecker)
//   Run       the replay engine over the stream, with the caller's observers
//
// A refused start state is a failure at the start of the trace: Run replays
// nothing, reports one oom failure (event 0, requested = the start state's
// reserved bytes, free = the limit) to the observers and sets
// ReplaySummary::start_state_refused. Never "fits".
#ifndef HBMSIM_SIM_SCENARIO_SCENARIO_RUN_H_
#define HBMSIM_SIM_SCENARIO_SCENARIO_RUN_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/recording_checker.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/seeded_allocator.h"

namespace hbmsim::sim {

// The policy of `config` for any limit, made once per scenario: a policy that
// plans from the whole trace (PolicySpec::plan) reads the scenario's events
// here, once, and every run at every limit shares the plan.
absl::StatusOr<LimitedFactory> MakeAllocatorMaker(const Scenario& scenario, const AllocatorConfig& config);

// How the start state went into this run.
struct StartStateOutcome {
  bool seeded = false;   // installed by the policy's seed hook
  bool refused = false;  // its reserved bytes exceed the limit: nothing replayed
  uint64_t segments = 0;
  uint64_t live_blocks = 0;
  Bytes reserved;
};

class ScenarioRun {
 public:
  // Errors: the policy's (bad options), the recording's (a second read of a
  // pipe), or a start state the policy rejects (InvalidArgument).
  static absl::StatusOr<std::unique_ptr<ScenarioRun>> Prepare(const Scenario& scenario,
                                                              const AllocatorConfig& config,
                                                              const LimitedFactory& maker, Bytes limit,
                                                              const ReplayOptions& options);
  // The same with a maker made for this one run.
  static absl::StatusOr<std::unique_ptr<ScenarioRun>> Prepare(const Scenario& scenario,
                                                              const AllocatorConfig& config, Bytes limit,
                                                              const ReplayOptions& options);
  ~ScenarioRun();

  // The policy as built (reports read its stats and memory map).
  const Allocator& policy() const { return *policy_; }
  // What the engine drives: the policy, or the seeded adapter around it.
  Allocator& driven() { return seeded_ ? static_cast<Allocator&>(*seeded_) : *policy_; }
  ReplayEngine& engine() { return *engine_; }
  EventReader& reader() { return *reader_; }
  const StartStateOutcome& start() const { return start_; }
  // Set when the recording records its device calls and OOMs.
  const RecordingChecker* checker() const { return checker_.get(); }

  // Replays `reader` (reader() itself, or a wrapper of it such as the viz
  // outputs' progress reader). The recorded_check of the summary comes from
  // the checker when there is one.
  absl::StatusOr<ReplaySummary> Run(EventReader& reader);
  absl::StatusOr<ReplaySummary> Run() { return Run(*reader_); }

 private:
  ScenarioRun() = default;
  absl::Status InstallStartState(const Scenario& scenario, const AllocatorConfig& config, Bytes limit);
  ReplaySummary Refused(Bytes limit);

  std::unique_ptr<Allocator> policy_;
  std::unique_ptr<SeededAllocator> seeded_;
  std::unique_ptr<EventReader> reader_;
  std::unique_ptr<ReplayEngine> engine_;
  std::unique_ptr<RecordingChecker> checker_;
  bool side_entries_ = false;  // the checker's alloc and segment counts are the summary's
  std::vector<ReplayObserver*> observers_;
  StartStateOutcome start_;
  Bytes limit_;
  std::optional<uint64_t> first_start_id_;
  HistoryAddresses final_history_;  // compared with the final state after the run
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_SCENARIO_RUN_H_
