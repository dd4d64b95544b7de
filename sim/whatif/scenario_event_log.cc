#include "sim/whatif/scenario_event_log.h"

namespace hbmsim::sim {

std::shared_ptr<const EventLog> ReadEventLog(const Scenario& scenario, uint64_t expected_events) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = scenario.Events();
  if (!reader.ok()) return nullptr;
  LoggingReader logging(**reader, expected_events);
  Event e;
  while (true) {
    absl::StatusOr<bool> more = logging.Next(e);
    if (!more.ok()) return nullptr;
    if (!*more) return logging.log();
  }
}

}  // namespace hbmsim::sim
