// The peak moment of reserved, explained exactly even when the explainer
// passed it over to keep its walks bounded (sim/report/reserved_explained.h,
// "Why a budget"): one more replay of the same scenario, with the same
// policy, limit and options, walks that one moment.
//
//   first run:   ... peak P (passed over) ... end       PeakToWalkAgain() = P
//   second run:  ... walk at P, nothing else ...        AdoptPeak(its peak)
//
// The replay is deterministic (same events, same policy, seeded randomness),
// so the state after event P is the one the first run went through.
#ifndef HBMSIM_SIM_SCENARIO_PEAK_WALK_H_
#define HBMSIM_SIM_SCENARIO_PEAK_WALK_H_

#include "absl/status/status.h"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/report/reserved_explained.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim {

// Nothing when `explainer` walked its last peak; else replays `scenario` as
// the first run did and gives `explainer` the walk of that peak.
absl::Status WalkPassedOverPeak(const Scenario& scenario, const AllocatorConfig& config, Bytes limit,
                                const ReplayOptions& options, ReservedExplainer& explainer);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_PEAK_WALK_H_
