// A Scenario: one recording opened once, the device chosen, and what the
// recording says about that device. Every command (replay, size, compare,
// --check-recorded) runs the same replay over it (sim/scenario/scenario_run.h).
//
//   path ──OpenRecording──▶ Recording ──ChooseDevice──▶ Scenario
//                                                        ├─ events of the device (a fresh stream per run)
//                                                        ├─ start state (segments and live blocks)
//                                                        ├─ recorded OOM and the capacity it implies
//                                                        └─ recorded settings (defaults under YAML/--set)
//
// The device is chosen as a person would:
//   1. --device, if given: a number, or the name the recording gives a device
//      (a profile's allocator, GPU_0_bfc); a recording that lists its devices
//      must have it;
//   2. else the device with a recorded OOM (the lowest, if several);
//   3. else the device with the most events (the lowest on a tie), a device's
//      memory before a pinned-host allocator's;
//   4. a streamed format lists no devices up front: the device its header's
//      `# device:` names, else the device of the first event; the engine
//      counts the others' events as it goes.
// The reason is kept for the reports, with the other devices and their counts.
//
// The start state (a snapshot taken mid-run) obeys the limit of each run:
//   seed   (default) the policy installs the recorded segments and blocks
//          as they were; if their reserved bytes exceed the limit, the run
//          fails at the start of the trace (never "fits");
//   place  the start state's live blocks are allocated through the policy
//          like any other alloc (its cached free segments are not kept).
// A policy that cannot take a start state places it either way.
#ifndef HBMSIM_SIM_SCENARIO_SCENARIO_H_
#define HBMSIM_SIM_SCENARIO_SCENARIO_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "trace/formats/recording.h"

namespace hbmsim::sim {

enum class StartStateMode : uint8_t { kSeed, kPlace };
std::string_view StartStateModeName(StartStateMode m);  // "seed", "place"
// "seed" or "place"; the error names the flag.
absl::StatusOr<StartStateMode> ParseStartStateMode(std::string_view text);

// `# device: N` in a streamed recording's header: the device a replay picks
// when --device is not given (a converted recording of several devices: the
// one its original picked; an STAlloc log: its rank's).
inline constexpr std::string_view kDeviceKey = "device";
// The device the header names, nullopt when it names none; an error names
// the file and the key.
absl::StatusOr<std::optional<DeviceId>> HeaderDevice(const Recording& recording);

struct ScenarioRequest {
  std::optional<DeviceId> device;  // --device N
  std::string device_name;         // --device NAME (not a number)
  StartStateMode start_state = StartStateMode::kSeed;
};
// The request from the --device (empty: not given) and --start-state flags
// every command takes; errors name the flag.
absl::StatusOr<ScenarioRequest> ParseScenarioRequest(std::string_view device, std::string_view start_state);

struct Scenario {
  std::shared_ptr<const Recording> recording;
  std::optional<DeviceId> device;     // nullopt: the device of the first event (a streamed format)
  std::string device_reason;          // why this device, for the reports
  std::vector<DeviceEvents> devices;  // every device the recording lists, ascending
  std::vector<StartSegment> start_state;
  std::optional<StartSummary> start_summary;
  StartStateMode start_mode = StartStateMode::kSeed;
  std::optional<OomCapacity> recorded_oom;  // of the chosen device
  std::optional<RecordedLimit> recorded_limit;  // the limit the recording states for it
  // The recording's first start_events events only rebuild the state it
  // began in (metadata `start_events`: a profile's inferred pool, laid out by
  // fillers held for a moment); every replay counts the peak live bytes from
  // the state they leave (ReplayOptions::peak_from).
  uint64_t start_events = 0;

  const std::string& path() const { return recording->path(); }
  // A new stream of the device's events (the engine skips other devices').
  absl::StatusOr<std::unique_ptr<EventReader>> Events() const { return recording->Events(device); }
  // The lowest device with a recorded OOM other than the chosen one.
  std::optional<DeviceId> OtherDeviceWithOom() const;
  // "device 1: it holds the recorded OOM; others: device 0 (3456 events), device 2 (12 events)".
  std::string DeviceText() const;
};

absl::StatusOr<Scenario> OpenScenario(const std::string& path, const ScenarioRequest& request);

// A run that replayed nothing is bad input, never "every allocation fit":
// "no events in PATH" when the recording holds neither events nor a start
// state (a zero-byte download), "--device N: no event of PATH is on device N;
// devices with events: 0, 3" when the chosen device has none. `name` is the
// input as the user gave it.
absl::Status CheckReplayedSomething(const Scenario& scenario, const ReplaySummary& summary,
                                    const std::string& name);
absl::StatusOr<Scenario> MakeScenario(std::shared_ptr<const Recording> recording,
                                      const ScenarioRequest& request);
// Rules 1-3 above over a recording that lists its devices (`wanted`: a
// --device already resolved to its number): the device and why, for every
// command that picks one (`inspect` of a snapshot's own state included).
absl::StatusOr<std::pair<DeviceId, std::string>> ChooseDevice(const Recording& r,
                                                              const std::vector<DeviceEvents>& devices,
                                                              std::optional<DeviceId> wanted);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_SCENARIO_H_
