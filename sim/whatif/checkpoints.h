// The trials of `size` sharing their common work, exactly: a trial at limit L
// resumes from a checkpoint that an earlier trial took after an event where
// L lay inside that trial's limit window (allocator/core/limit_window.h), so
// every decision up to that event would have been the same at L.
//
//   capture     one read of the scenario into memory (a compact record per
//               event), so a trial starts at any event without parsing;
//   leader      a trial at a limit no trace reaches (2^62), whose windows
//               are [the least limit that decides alike, ∞): checkpoints any
//               trial above them can start from;
//   trial at L  resumes from the latest checkpoint whose window holds L
//               (CloneAt(L) of its policy, a copy of its engine state), or
//               starts fresh; it takes checkpoints of its own every stride
//               events until its first failure.
//
// A checkpoint is a copy of the policy and of the engine's state, about what
// the live set takes; at most kMaxCheckpoints are kept, and KeepFor() drops
// those whose window holds no limit the search will still ask for.
//
// Used only where a trial would be nothing more than policy + engine +
// events: a policy with limit windows (bfc with the options it keeps them
// for), no start state seeded into it, a recording without side entries
// (RecordingChecker), events without shapes or unknown attributes, at most
// kMaxEvents events. Anything else (and any error) runs RunTrial instead.
#ifndef HBMSIM_SIM_WHATIF_CHECKPOINTS_H_
#define HBMSIM_SIM_WHATIF_CHECKPOINTS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/limit_window.h"
#include "sim/whatif/trial.h"

namespace hbmsim {

class SharedTrials {
 public:
  static constexpr uint64_t kMaxEvents = uint64_t{1} << 23;  // 8 M events: 192 MiB of records
  static constexpr size_t kMaxCheckpoints = 96;

  // nullptr when trials of `target` cannot be shared (see above).
  static std::unique_ptr<SharedTrials> Make(const TrialTarget& target);
  ~SharedTrials();

  // RunTrial(target, limit, options)'s result, for options with no probe
  // (probe_event, in_use_target unset). Thread-safe.
  absl::StatusOr<TrialResult> Run(Bytes limit, const TrialOptions& options);

  // From now on only limits in [lo, hi] will be asked for.
  void KeepFor(Bytes lo, Bytes hi);

  // For tests and the bench: trials run, and those that resumed.
  uint64_t trials() const;
  uint64_t resumed() const;
  // Events replayed by trials (resumed ones from their checkpoint on).
  uint64_t events_replayed() const;
  uint64_t events() const { return events_.size(); }

  // What the engine reads of an event, for a policy without shapes.
  struct LoggedEvent {
    uint64_t id = 0;
    uint64_t bytes = 0;
    uint64_t stream = 0;
    uint32_t device = 0;
    EventKind kind = EventKind::kMark;
  };
  struct Checkpoint;

 private:
  explicit SharedTrials(const TrialTarget& target) : target_(target) {}
  absl::StatusOr<TrialResult> RunShared(Bytes limit, const TrialOptions& options);
  std::shared_ptr<const Checkpoint> Best(Bytes limit) const;
  void Add(std::shared_ptr<const Checkpoint> c);

  const TrialTarget& target_;
  std::vector<LoggedEvent> events_;
  TraceMetadata metadata_;
  uint64_t stride_ = 1;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Checkpoint>> checkpoints_;
  uint64_t trials_ = 0;
  uint64_t resumed_ = 0;
  uint64_t events_replayed_ = 0;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_CHECKPOINTS_H_
