// Pieces the `size` and `compare` commands share: resolving an allocator
// argument with the recording's settings and the user's options, and the
// device line of their reports.
#ifndef HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_
#define HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/trial.h"

namespace hbmsim::sim {

// The --allocator argument: `given` when not empty, else the allocator that
// ran the job as the recording says (RecordedPolicy, sim/scenario/
// scenario_config.h: a PyTorch snapshot's is PyTorch's, a TF/JAX profile's BFC, a
// converted recording's the one its `# allocator:` names). InvalidArgument
// when the recording does not say (a hand-written text trace, an RMM log).
// `chosen` receives, when the recording chose, a note saying so.
absl::StatusOr<std::string> AllocatorFor(std::string_view given, const Scenario& scenario, std::string& chosen);

// The --allocators of `compare TRACE` when none are given: the runtimes'
// allocators hbmsim models (PolicySpec::models_a_runtime), the one whose
// runtime wrote the recording first, as a comma-separated list;
// `chosen` receives the note saying so.
std::string RuntimeAllocators(const Scenario& scenario, std::string& chosen);

// `NAME|FILE.yaml`, then the recording's settings (as `replay` takes them),
// then the `KEY=VALUE` edits; errors name the allocator argument. `applied`,
// if given, receives the settings taken from the recording.
absl::StatusOr<AllocatorConfig> ResolveWithSets(std::string_view allocator, const std::vector<std::string>& sets,
                                                const Scenario& scenario,
                                                std::vector<std::string>* applied = nullptr);

// `NAME,NAME:KEY=VALUE`: comma-separated NAME[:KEY=VALUE...], each
// resolved as ResolveWithSets does.
absl::StatusOr<std::vector<AllocatorConfig>> ParseAllocatorList(std::string_view list, const Scenario& scenario);

// "1 (it holds the recorded OOM); others: ..." or "0 (the first event's)".
std::string DeviceLine(const Scenario& scenario, const ScenarioSurvey& survey);

// {"name": ..., "options": {...}} in spec order.
nlohmann::ordered_json AllocatorJson(const AllocatorConfig& config);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_WHATIF_COMMON_H_
