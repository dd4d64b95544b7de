// The recording's section of `hbmsim replay`'s reports: which device and
// why, the settings taken from the recording, the start state and what
// became of it (seeded, placed or refused), the capacity a recorded OOM
// implies, how the simulation compares with the recording, the recorded OOMs
// replayed (the runtime's text for the simulated state, then hbmsim's
// verdict) and the policy's own summary at the end.
#ifndef HBMSIM_SIM_SCENARIO_SCENARIO_REPORT_H_
#define HBMSIM_SIM_SCENARIO_SCENARIO_REPORT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim {

struct ScenarioReportInput {
  const Scenario* scenario = nullptr;
  const ScenarioRun* run = nullptr;
  const AllocatorConfig* config = nullptr;
  Bytes limit;
  std::vector<std::string> applied_settings;
  bool check_recorded = false;
  // What the report printed before this section (the runtime's text at the
  // first failure): a recorded OOM's message already in it is not repeated,
  // and neither is the runtime's summary.
  std::string printed_above;
};

// Empty for a recording that knows nothing beyond its events (text, .hbt, ...).
bool HasScenarioSection(const Scenario& scenario);
std::string ScenarioText(const ScenarioReportInput& in);
nlohmann::ordered_json ScenarioJson(const ScenarioReportInput& in);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_SCENARIO_REPORT_H_
