// The live intervals of a scenario's buffers, for a policy that plans from
// the whole trace (PolicySpec::plan): one pass over
// the scenario's events before any replay.
#ifndef HBMSIM_SIM_SCENARIO_INTERVALS_H_
#define HBMSIM_SIM_SCENARIO_INTERVALS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/buffer_interval.h"
#include "sim/layer.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim {

// One interval per alloc and program_load of the scenario's device (a
// program is a buffer of its own id space), keyed by the event's index as
// the replay numbers events, from the alloc to the free, free_completed or
// unload that ends it (UINT64_MAX: never). Zero-byte allocs take no space.
// Errors: the reader's.
absl::StatusOr<std::vector<BufferInterval>> ScenarioIntervals(const Scenario& scenario);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_INTERVALS_H_
