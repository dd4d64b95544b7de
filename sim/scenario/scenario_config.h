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

namespace hbmsim::sim {

// Sets the options the recording ran with (the policy's
// RecordingHooks::recorded_options) on every option still at its default: a
// YAML config's values and --set, applied afterwards by the caller, win.
// Returns "key=value" for each option set.
std::vector<std::string> ApplyRecordedSettings(const Scenario& scenario, AllocatorConfig& config);
// The same for settings read outside a Scenario (a snapshot's own segments,
// `hbmsim inspect`): `device` is the one the settings are applied for.
std::vector<std::string> ApplyRecordedSettings(const RecordedSettings& settings, DeviceId device,
                                               AllocatorConfig& config);

// What a recording says about the allocator that ran it, in the header of a
// converted one (`hbmsim convert`: a text trace or .hbt has no runtime of its
// own): `# allocator: NAME`, `# allocator_settings: expandable_segments=true
// max_split_size=67108864` (the options the original's settings set, as
// --set takes them). Only `# device_bytes:` was read before: the limit.
inline constexpr std::string_view kAllocatorKey = "allocator";
inline constexpr std::string_view kAllocatorSettingsKey = "allocator_settings";
// Both are of the device the header's `# device:` names, when it names one
// (kDeviceKey, sim/scenario/scenario.h), as is `# device_bytes:`; another
// device's own are `# allocator_settings.device_N:` and `# device_bytes.device_N:`
// (PerDeviceKey), so that a converted multi-device recording replays each
// device as the original does.
inline constexpr std::string_view kDeviceBytesKey = "device_bytes";
// "KEY.device_N": device N's own KEY.
std::string PerDeviceKey(std::string_view key, DeviceId device);
// The header's KEY for the scenario's device: its own PerDeviceKey, else KEY
// when the header's `# device:` names that device or none; value nullptr
// otherwise. `key` is the one read, for messages.
struct HeaderValue {
  std::string key;
  const std::string* value = nullptr;
};
HeaderValue HeaderValueFor(const Scenario& scenario, std::string_view key);
// Whether the header carries settings for any device.
bool HasHeaderSettings(const Recording& recording);

// The header's `# allocator_settings:` (and each device's own), checked
// against the policy its `# allocator:` names: each word KEY=VALUE, an option
// of that policy, a value it can hold. The error names the file and the key.
absl::Status CheckHeaderSettings(const Recording& recording);

// The allocator that ran the job, when the recording says: the policy whose
// runtime writes its format (a snapshot's, a profile's), else the
// built-in one its `# allocator:` names; nullptr otherwise. `why`, if given,
// receives the reason ("whose runtime writes torch-snapshot recordings",
// "named by the trace's # allocator").
const PolicySpec* RecordedPolicy(const Recording& recording, std::string* why = nullptr);

// The option edits the recording's own settings make for `policy` on
// `device` ("key=value", as ApplyRecordedSettings reports them), for
// `hbmsim convert` to keep as `# allocator_settings:`.
std::vector<std::string> RecordedOptionEdits(const Recording& recording, const PolicySpec& policy, DeviceId device);

// A compiled program (an XLA dump, `# compiled_program: true`): it ran on no
// device, so it has no device limit; its settings still apply.
bool IsCompiledProgram(const Recording& recording);

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

// The limit the job ran under, as the recording says (the three recorded
// rules above: its OOM's capacity, its stated limit, `# device_bytes:`), or
// nullopt; `advise` checks each change at it when --bytes-limit is not given.
absl::StatusOr<std::optional<LimitChoice>> RecordedLimitChoice(const Scenario& scenario);

absl::StatusOr<LimitChoice> ResolveLimit(const Scenario& scenario, const AllocatorConfig& config,
                                         std::string_view flag);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_SCENARIO_CONFIG_H_
