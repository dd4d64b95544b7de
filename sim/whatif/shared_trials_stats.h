// What the trials of one SharedTrials (sim/whatif/checkpoints.h) did: counted
// for its accessors (the tests and the bench read them) and, with
// HBMSIM_SHARED_TRIALS_STATS set, printed on stderr to measure the sharing
// (docs/what-if.md "Cost"): one line a trial, with when it began and ended
// (the search's timeline: how busy the cores were), and a summary when the
// trials are done.
//
//   shared trials: E events, T trials (R resumed, M met a finished one),
//                  N events replayed (N/E full replays), C more by trials called off
//     trial LIMIT: from START to END, fits|fails[ (met a finished trial)],
//                  window [LO, HI], from +A to +B ms
//
// Not thread-safe: SharedTrials calls it under its lock.
#ifndef HBMSIM_SIM_WHATIF_SHARED_TRIALS_STATS_H_
#define HBMSIM_SIM_WHATIF_SHARED_TRIALS_STATS_H_

#include <cstdint>

#include "allocator/core/limit_window.h"
#include "allocator/core/units.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// The events one trial replayed: [start, end) at `limit`, begun at
// `began_ms` (MsSinceStart()).
struct TrialSpan {
  Bytes limit;
  uint64_t start = 0;
  uint64_t end = 0;
  double began_ms = 0;
};

// How a trial that ran to its end came out.
struct TrialEnd {
  bool resumed = false;  // from a checkpoint
  bool fails = false;
  bool met = false;      // stopped where it met a finished trial
  LimitWindow window;    // its policy's window at the end (empty without one)
};

class SharedTrialsStats {
 public:
  // Milliseconds since the program started, near enough (static
  // initialisation): the trials' timeline counts from it.
  static double MsSinceStart();

  void Finished(const TrialSpan& span, const TrialEnd& end);
  // A trial cancelled by the search: its events count apart.
  void CalledOff(const TrialSpan& span);
  // The summary line, when asked for; `events`: the log's, `met`: trials that met a finished one.
  void PrintSummary(uint64_t events, uint64_t met) const;

  uint64_t trials() const { return trials_; }
  uint64_t resumed() const { return resumed_; }
  uint64_t events_replayed() const { return events_replayed_; }

 private:
  uint64_t trials_ = 0;
  uint64_t resumed_ = 0;
  uint64_t events_replayed_ = 0;
  uint64_t events_called_off_ = 0;  // by trials called off (their checkpoints kept)
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_SHARED_TRIALS_STATS_H_
