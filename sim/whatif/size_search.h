// `hbmsim size`: the smallest bytes_limit at which a trace replays with no
// failed allocation, for one allocator configuration.
//
// The candidates are the grid L0 + k·resolution (k >= 0), where L0 is the
// trace's peak live bytes: no allocator fits below it. Allocators are not
// monotonic in the limit (a larger pool can fragment differently), so the
// search is: bracket, narrow, complete.
//   bracket  rounds of 4 probes at growing factors of L0 (1, 1.0625, 1.125,
//            1.25; then 1.5, 2, 3, 4; then ×16 per round) until one passes;
//   narrow   rounds of 3 probes splitting (largest failing, smallest passing)
//            into quarters, down to one grid step;
//   complete the answer's trial run to the last event (it must pass; its
//            probe may have stopped where it met a finished trial), plus the
//            next 3 grid points, to catch a larger limit that fails, and the
//            2 grid points below it that were not tried: if one of them
//            passes, the answer moves down to it and the narrowing goes on
//            from there.
// Every probe is a trial (sim/whatif/trial.h: the replay `hbmsim replay`
// runs) that stops at its first failure; where the policy keeps limit windows
// a probe resumes from a checkpoint of an earlier one (sim/whatif/checkpoints.h)
// and gives the same TrialResult, and so does the answer's run to the end:
// it resumes from the latest checkpoint its limit may use (usually its own
// probe's, near the end). Until 2026-11-27 that run was a replay from the
// first event, a check on the sharing; it cost a full replay (a caching allocator's: 40% of
// `size`) and checked what tests/sim/whatif/checkpoints_test.cc holds on every
// build: a resumed trial is a fresh one, and `size` with sharing is `size`
// without it, answer, probes and this run alike.
// Probes run in parallel, least grid point first (in the complete phase,
// where every probe left is needed, the one with the most events left to
// replay first, so that no core idles while one long probe ends the search),
// and a narrowing round starts as soon as the probes that decide its points
// are in (those still running all lie above the smallest pass). Two things
// keep the cores on the probes that decide (shared trials only):
//   defer      a probe running above a new smallest pass only completes the
//              record: when the round lacks cores it is called off and
//              queued again behind it, to resume from its own checkpoints
//              later (at the latest alongside the answer's run);
//   speculate  while the search waits on one probe and a core is idle, the
//              next round's points for either outcome run ahead of it; those
//              for the outcome that did not come are called off.
// Which probes are asked for never depends on --jobs or timing, and a probe
// run ahead counts only once asked for, so the result is the same for every
// --jobs. `non_monotonic` is the smallest limit above the answer that was
// tried and failed.
#ifndef HBMSIM_SIM_WHATIF_SIZE_SEARCH_H_
#define HBMSIM_SIM_WHATIF_SIZE_SEARCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/whatif/trial.h"

namespace hbmsim::sim {

class ReplayObserver;

// The search so far, for a progress line (SizeOptions::on_progress).
struct SizeProgress {
  // `compare` and `advise` size several configurations: which one (from 0),
  // named as its table row is (RowLabel, sim/whatif/comparison.h).
  size_t config = 0;
  size_t configs = 1;
  std::string config_label;
  size_t limits_tried = 0;
  std::optional<Bytes> smallest_fit;
  std::optional<Bytes> largest_fail;  // the largest failure below smallest_fit (any, before one fits)
};

struct SizeOptions {
  uint64_t resolution = 256;  // > 0
  int jobs = 1;
  // Probes resume from checkpoints of earlier ones where the policy allows
  // (sim/whatif/checkpoints.h); the result is the same either way.
  bool share_trials = true;
  // Progress (`hbmsim size` on a terminal): the survey's events go to
  // `survey_observer`, and each verdict the search counts to `on_progress`,
  // on the thread that called. Neither changes what is searched.
  ReplayObserver* survey_observer = nullptr;
  std::function<void(const SizeProgress&)> on_progress = nullptr;
};

struct SizeProbe {
  Bytes limit;
  bool ok = false;
};

struct SizeResult {
  bool found = false;  // false: no limit up to the search's cap fits
  Bytes min_bytes_limit;
  Bytes peak_live_bytes;
  double overhead = 0;  // min / peak_live − 1 (0 when peak live is 0)
  std::optional<Bytes> non_monotonic;
  std::vector<SizeProbe> probes;  // every limit tried, ascending
  TrialResult at_answer;          // the answer's trial, run to the last event
  // Whether probes read the events kept in memory (sim/whatif/checkpoints.h)
  // rather than the recording, and whether they resumed from checkpoints of
  // earlier ones rather than each replaying from the start.
  bool trials_shared = false;
  bool trials_resume = false;
};

absl::StatusOr<SizeResult> FindMinLimit(const TrialTarget& target, const SizeOptions& options);

// `hbmsim size` from an opened scenario, the one path every caller takes:
// the survey (keeping the events when the probes will share them, and with
// more than one job the leader replaying behind it on a thread of its own:
// EarlyLeader, sim/whatif/checkpoints.h), the trial target, the search.
struct SizedScenario {
  TrialTarget target;  // its survey: the device, the events, the peak
  SizeResult result;
};
// Errors: the recording's and the allocator's (bad input), or the search's
// (InternalError for a broken invariant).
absl::StatusOr<SizedScenario> SizeScenario(const Scenario& scenario, const AllocatorConfig& config,
                                           const SizeOptions& options);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_SIZE_SEARCH_H_
