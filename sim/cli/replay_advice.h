// What `hbmsim replay` works out beyond the replay itself, by more trials of
// the same scenario:
//   ReplayLimit      the limit the replay runs at: ResolveLimit's, or for a
//                    compiled program without --bytes-limit the smallest
//                    limit the policy fits (the `hbmsim size` search);
//   AddAdvice        after a failure, each setting the policy offers replayed
//                    and sized as `hbmsim advise` does ("What would fit"),
//                    and again from a fresh start when the recording began
//                    warm (sim/whatif/fresh_start.h);
//   AddStartAnswers  for a recording that began warm, the minimum limit as
//                    recorded and from a fresh start, which the verdict says
//                    (taken from the advice when AddAdvice ran).
// What cannot be worked out is said in the report, never fatal.
#ifndef HBMSIM_SIM_CLI_REPLAY_ADVICE_H_
#define HBMSIM_SIM_CLI_REPLAY_ADVICE_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/allocator_config.h"
#include "sim/report/replay_report.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"

namespace hbmsim::sim::cli {

// The replay's flags the trials follow.
struct ReplayTrials {
  std::string allocator;          // --allocator, as given (a candidate is it plus the row's --set edits)
  std::vector<std::string> sets;  // --set
  int jobs = 1;                   // --jobs
  bool no_advice = false;         // --no-advice: no trials at all
  bool quiet = false;             // --quiet: the verdict only (its two answers still)
};

absl::StatusOr<LimitChoice> ReplayLimit(const Scenario& scenario, const AllocatorConfig& config,
                                        std::string_view flag);
void AddAdvice(const Scenario& scenario, const AllocatorConfig& config, const ReplayTrials& trials,
               ReplayReportInput& report);
void AddStartAnswers(const Scenario& scenario, const AllocatorConfig& config, const ReplayTrials& trials,
                     ReplayReportInput& report);

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_REPLAY_ADVICE_H_
