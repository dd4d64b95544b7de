// The allocator side of a Scenario: the recording's settings as the policy's
// defaults, and the limit a run uses with where it came from.
#ifndef HBMSIM_SIM_SCENARIO_SCENARIO_CONFIG_H_
#define HBMSIM_SIM_SCENARIO_SCENARIO_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario.h"

namespace hbmsim {

// Sets the options the recording ran with (the policy's
// RecordingHooks::recorded_options) on every option still at its default: a
// YAML config's values and --set, applied afterwards by the caller, win.
// Returns "key=value" for each option set.
std::vector<std::string> ApplyRecordedSettings(const Scenario& scenario, AllocatorConfig& config);
// The same for settings read outside a Scenario (a snapshot's own segments,
// `hbmsim inspect`): `device` is the one the settings are applied for.
std::vector<std::string> ApplyRecordedSettings(const RecordedSettings& settings, DeviceId device,
                                               AllocatorConfig& config);

struct LimitChoice {
  Bytes limit;
  std::string source;  // "--bytes-limit", "the trace's # device_bytes", ...
};

// The limit of a run, from the first that applies:
//   --bytes-limit SIZE;
//   --bytes-limit auto, or no limit anywhere and a recorded OOM: the capacity
//     the recorded OOM implies (an error without one, naming the device that
//     has one);
//   the config's bytes_limit (YAML or --set);
//   the limit the recording states for the device (a profile's
//     bytes_allocated + bytes_available + bytes_reserved);
//   the trace's `# device_bytes:`;
//   a policy that runs unlimited, on a recording with a start state: unlimited
//     (the job never hit its capacity).
// `flag` is the --bytes-limit text ("" when absent).
// --bytes-limit alone (a size, or auto); nullopt when `flag` is empty.
absl::StatusOr<std::optional<LimitChoice>> LimitFromFlag(const Scenario& scenario, std::string_view flag);

absl::StatusOr<LimitChoice> ResolveLimit(const Scenario& scenario, const AllocatorConfig& config,
                                         std::string_view flag);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_SCENARIO_SCENARIO_CONFIG_H_
