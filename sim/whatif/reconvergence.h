// Reconvergence of `size`'s probes: the trial at L that has diverged from
// every checkpoint may later come back to the very state a finished trial
// held at the same event; from there it decides as that trial did, and so
// fits if and only if that trial fitted, provided L lies in the window of
// every decision that trial made after that event.
//
//   trial R (finished)   ──●────────●────────●────────●──▶ fits / fails at f
//                          m0       m1       m2       m3
//                         fingerprint of the state at each mark, and
//                         ahead(k) = ∩ windows of R's decisions after mark k
//   probe at L            ──●────────●──╳ (stops)
//                                    fingerprint(m1) == R's and L ∈ ahead(1)
//                                    ⇒ the probe fits iff R fitted
//
// Runs at nearby limits part where the tail wins a best fit under one and not
// the other; once the buffers they placed apart are freed and their chunks
// coalesce they may hold the same chunks again. How often depends on the
// trace: on generated traces 6-32 of ~36 probes met one, and the events
// replayed fell by 6-82% (docs/what-if.md "Cost"). Only the verdict
// carries over: the kind of a failure (oom or fragmentation) compares the
// request with free bytes the limit sizes, and the stats are the limit's.
//
// Marks fall at multiples of the shared trials' stride, where the trial can
// afford the fingerprint (SharedTrials bounds its walks by the events
// replayed; a skipped mark is a meeting missed, never a wrong one); a fingerprint
// (allocator/core/limit_window.h) is 128 bits, so a false meeting has odds
// of 2^-128 per comparison.
#ifndef HBMSIM_SIM_WHATIF_RECONVERGENCE_H_
#define HBMSIM_SIM_WHATIF_RECONVERGENCE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "allocator/core/limit_window.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// One finished trial's marks.
struct TrialTrack {
  struct Mark {
    uint64_t event = 0;  // events [0, event) applied
    StateFingerprint fingerprint;
    LimitWindow ahead;  // the limits deciding alike from here to the end
  };
  std::vector<Mark> marks;  // ascending events
  // Whether it fitted every event (else it stopped at its first failure).
  // Only that: which kind of failure it was (oom or fragmentation) compares
  // the request with free bytes the limit sizes, so a run that decides alike
  // may call it otherwise.
  bool fits = false;
};

// Builds a trial's track as it runs.
class TrackRecorder {
 public:
  // At each mark: the state's fingerprint, and the window of the decisions
  // since the last mark (the policy's TakeRecentWindow()).
  void Mark(uint64_t event, const StateFingerprint& fingerprint, const LimitWindow& since_last);
  // At the end: the window since the last mark. nullptr when no mark was taken.
  std::shared_ptr<const TrialTrack> Finish(const LimitWindow& since_last, bool fits);

 private:
  std::vector<TrialTrack::Mark> marks_;
  std::vector<LimitWindow> after_;  // after_[k]: the decisions between mark k and k+1
};

// The finished trials' tracks; thread-safe.
class TrialTracks {
 public:
  static constexpr size_t kMaxTracks = 128;

  void Add(std::shared_ptr<const TrialTrack> track);
  // Whether a trial at `limit` holding the state `fingerprint` after `event`
  // events fits, when a finished trial held it there and decided alike for
  // `limit` ever after; else nullopt.
  std::optional<bool> Meet(uint64_t event, const StateFingerprint& fingerprint, Bytes limit) const;

  uint64_t met() const;  // for the stats: trials that stopped early

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const TrialTrack>> tracks_;
  mutable uint64_t met_ = 0;
};

// One trial's part in reconvergence, at each stride point it passes: it marks
// its state where it can afford the fingerprint (one part of the state walked
// per kEventsPerFingerprintPart events replayed, and a stride's worth to
// start: a live set of millions costs a few percent and some marks, never
// more), and a trial that needs only its verdict looks for a finished trial
// to meet. Once it has ended without meeting one, Finish() gives its track.
class TrialMarker {
 public:
  static constexpr uint64_t kEventsPerFingerprintPart = 4;

  // `start`: the first event the trial replays; `stride`: its points' spacing.
  TrialMarker(LimitWindowPolicy& policy, const TrialTracks& finished, Bytes limit, bool verdict_only, uint64_t start,
              uint64_t stride)
      : policy_(policy), finished_(finished), limit_(limit), verdict_only_(verdict_only), start_(start),
        stride_(stride) {}

  // Before event i is replayed (i a multiple of the stride). False when the
  // trial met a finished one: it may stop, and met() is its verdict.
  bool AtPoint(uint64_t i);
  // Whether the trial fits, when it met a finished trial.
  const std::optional<bool>& met() const { return met_; }
  // The trial's track, once it has ended on its own (`fits`: with no failure).
  std::shared_ptr<const TrialTrack> Finish(bool fits);

 private:
  LimitWindowPolicy& policy_;
  const TrialTracks& finished_;
  const Bytes limit_;
  const bool verdict_only_;
  const uint64_t start_;
  const uint64_t stride_;
  uint64_t fingerprint_work_ = 0;  // parts of the state the trial may have walked so far
  TrackRecorder track_;
  std::optional<bool> met_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_RECONVERGENCE_H_
