// The trials of `size` sharing their common work, exactly: a trial at limit L
// resumes from a checkpoint that an earlier trial took after an event where
// L lay inside that trial's limit window (allocator/core/limit_window.h), so
// every decision up to that event would have been the same at L.
//
//   log         the events in memory (sim/engine/event_log.h), kept by the
//               survey's pass when asked, so a trial starts at any event
//               without parsing;
//   leader      a trial at a limit no trace reaches (2^62), whose windows
//               are [the least limit that decides alike, ∞): checkpoints any
//               trial above them can start from (`size` replays it behind the
//               survey, on a thread of its own: EarlyLeader below);
//   trial at L  resumes from the latest checkpoint whose window holds L
//               (CloneAt(L) of its policy, a copy of its engine state), or
//               starts fresh; it takes checkpoints of its own every stride
//               events until its first failure.
//
//   marks       every trial that stops at its first failure fingerprints its
//               state at each multiple of the stride; a probe that needs only its
//               verdict stops where it meets a finished trial's
//               (sim/whatif/reconvergence.h).
//
// A checkpoint is a copy of the policy and of the engine's state, about what
// the live set takes; at most kMaxCheckpoints are kept, and KeepFor() drops
// those whose window holds no limit the search will still ask for.
//
// Used only where a trial would be nothing more than policy + engine +
// events: no start state seeded into the policy, a recording without side
// entries (RecordingChecker), events an EventLog holds (sim/engine/event_log.h).
// Anything else (and any error) runs RunTrial instead. A policy without limit
// windows (its row sets no SharedTrialSupport, or its options keep none:
// TrackLimitWindow() says false) shares only the log: every trial replays it
// from the first event, with no leader, checkpoint or mark; that still spares
// each trial decoding the recording (a fifth of a `size` of a
// binary trace, more of a text one; bench/README.md).
#ifndef HBMSIM_SIM_WHATIF_CHECKPOINTS_H_
#define HBMSIM_SIM_WHATIF_CHECKPOINTS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/limit_window.h"
#include "sim/engine/event_log.h"
#include "sim/layer.h"
#include "sim/whatif/reconvergence.h"
#include "sim/whatif/shared_trials_stats.h"
#include "sim/whatif/trial.h"

namespace hbmsim::sim {

class SharedTrials {
 public:
  static constexpr size_t kMaxCheckpoints = 96;

  // Whether trials of `config` on `scenario` can share the events: then the
  // survey should keep them (SurveyOptions::keep_events) for Make to use.
  static bool MayShare(const Scenario& scenario, const AllocatorConfig& config);
  // nullptr when trials of `target` cannot be shared (see above). Uses the
  // survey's events when it kept them, else reads the scenario once more.
  static std::unique_ptr<SharedTrials> Make(const TrialTarget& target);
  ~SharedTrials();

  // RunTrial(target, limit, options)'s result, for options with no probe
  // (probe_event, peak_in_use_stats unset). Thread-safe.
  absl::StatusOr<TrialResult> Run(Bytes limit, const TrialOptions& options);

  // The event a trial at `limit` would resume from now (0: the first): the
  // later, the less it has left to replay.
  uint64_t ResumeEvent(Bytes limit) const;

  // From now on only limits in [lo, hi] will be asked for.
  void KeepFor(Bytes lo, Bytes hi);

  // For tests and the bench: trials run, and those that resumed.
  uint64_t trials() const;
  uint64_t resumed() const;
  // Verdict-only trials that stopped where they met a finished one.
  uint64_t met() const { return tracks_.met(); }
  // Events replayed by trials (resumed ones from their checkpoint on).
  uint64_t events_replayed() const;
  uint64_t events() const { return log_->events.size(); }
  // Whether trials resume from checkpoints of earlier ones (the policy keeps
  // limit windows); else they share only the log.
  bool resumes() const { return resumes_; }

  struct Checkpoint;

 private:
  friend class EarlyLeader;
  SharedTrials(const Scenario& scenario, LimitedFactory maker, SharedTrialSupport support,
               std::shared_ptr<const EventLog> log)
      : scenario_(scenario), maker_(std::move(maker)), support_(support), log_(std::move(log)) {}
  // kGrowingLog: the early leader, behind a log still being written; its
  // checkpoints thin out as the trace goes on (its length is not known).
  enum class From { kBestCheckpoint, kGrowingLog };
  // RunShared where it can be, else RunTrial.
  absl::StatusOr<TrialResult> SharedOrOwn(Bytes limit, const TrialOptions& options, From from_where);
  absl::StatusOr<TrialResult> RunShared(Bytes limit, const TrialOptions& options,
                                        From from_where = From::kBestCheckpoint);
  struct StridePoint;
  absl::StatusOr<std::unique_ptr<Allocator>> PolicyFrom(const Checkpoint* from, Bytes limit) const;
  ReplayOptions TrialReplayOptions(const TrialOptions& options) const;
  void CountCalledOff(TrialSpan span, uint64_t events_read);
  void FinishMarks(std::optional<TrialMarker>& marker, TrialResult& out);
  std::shared_ptr<const Checkpoint> Best(Bytes limit) const;
  void Add(std::shared_ptr<const Checkpoint> c);

  const Scenario& scenario_;
  const LimitedFactory maker_;
  const SharedTrialSupport support_;  // the policy row's: its windows and direct loop
  const TrialTarget* target_ = nullptr;  // set once the survey is done (Make, EarlyLeader::Finish)
  std::shared_ptr<const EventLog> log_;
  uint64_t stride_ = 1;
  bool resumes_ = true;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Checkpoint>> checkpoints_;
  SharedTrialsStats stats_;  // under mu_
  TrialTracks tracks_;  // the finished trials' marks (reconvergence.h)
};

// The leader replayed while the survey still reads the recording: on a
// thread of its own, close behind the survey's log as it grows, so on two
// cores it costs no time of its own. `size` starts one before the survey,
// gives log() to the survey (SurveyOptions::log), and hands Finish() to
// FindMinLimit, which then replays no leader itself. Anything amiss (the log
// dropped, the leader failing) and Finish() gives nullptr: FindMinLimit makes
// its own SharedTrials as before.
class EarlyLeader {
 public:
  // nullptr where trials of `config` on `scenario` cannot be shared, the
  // machine has one core, or no log can be made.
  static std::unique_ptr<EarlyLeader> Start(const Scenario& scenario, const AllocatorConfig& config);
  ~EarlyLeader();  // waits for the leader: call after the survey is done
  EarlyLeader(const EarlyLeader&) = delete;
  EarlyLeader& operator=(const EarlyLeader&) = delete;

  const std::shared_ptr<EventLog>& log() const { return log_; }
  // After the survey (which filled log()): the shared trials, the leader's
  // checkpoints in them, or nullptr.
  std::unique_ptr<SharedTrials> Finish(const TrialTarget& target);

 private:
  EarlyLeader() = default;
  void Join();

  std::shared_ptr<EventLog> log_;
  std::unique_ptr<SharedTrials> shared_;
  absl::Status leader_;  // written by the thread, read after Join
  std::thread thread_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_CHECKPOINTS_H_
