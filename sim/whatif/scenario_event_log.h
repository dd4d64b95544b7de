// A scenario's events read into an EventLog (sim/engine/event_log.h) of
// their own, for the trials of `size` and `compare` when the survey kept none.
#ifndef HBMSIM_SIM_WHATIF_SCENARIO_EVENT_LOG_H_
#define HBMSIM_SIM_WHATIF_SCENARIO_EVENT_LOG_H_

#include <cstdint>
#include <memory>

#include "sim/engine/event_log.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim {

// nullptr when the events cannot be logged or do not read (the trials report
// the error).
std::shared_ptr<const EventLog> ReadEventLog(const Scenario& scenario, uint64_t expected_events);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_SCENARIO_EVENT_LOG_H_
