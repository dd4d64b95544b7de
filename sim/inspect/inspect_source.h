// The state `hbmsim inspect` analyses: the policy that ran the job (the one
// whose runtime writes the recording's format, or its `# allocator:`; its row
// must have a state analysis, PolicySpec::state_analysis) holding either
//   * the snapshot's own segments of one device (no --at): what
//     memory_snapshot() showed when the file was written, for any generation
//     or form, trace or not; or
//   * the state a replay of the device's trace reached (--at EVENT, --at
//     LABEL of a mark, --at oom = right after the first recorded OOM), started
//     from the rebuilt initial state exactly as `hbmsim replay` does.
// Both go through the pipeline every command shares: the policy's
// RecordingHooks (recorded_options for the snapshot's allocator_settings,
// seed for its segments), and for --at a ScenarioRun of the opened Scenario
// (sim/scenario/), so the state is the one `hbmsim replay` reaches.
// The limit: --bytes-limit, else the capacity a recorded OOM implies (replays
// only), else unlimited.
#ifndef HBMSIM_SIM_INSPECT_INSPECT_SOURCE_H_
#define HBMSIM_SIM_INSPECT_INSPECT_SOURCE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "sim/config/policy_registry.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim::inspect {

struct SourceOptions {
  std::string path;
  std::optional<DeviceId> device;
  std::optional<std::string> at;  // EVENT index, a mark's label, or "oom"
  std::optional<Bytes> bytes_limit;
  // --allocator: the policy that shows the state when the recording names
  // none (a text trace without `# allocator:`), or another one; "": the
  // recording's own.
  std::string allocator;
};

struct InspectedState {
  std::shared_ptr<const Recording> recording;
  std::unique_ptr<Allocator> owner;    // the policy as built (the snapshot's own segments)
  std::unique_ptr<Scenario> scenario;  // --at: the recording the run reads
  std::unique_ptr<ScenarioRun> run;    // --at: owns the policy, stopped at the point asked
  const Allocator* policy = nullptr;  // owner's or run's
  const PolicySpec* row = nullptr;    // its registry row, which has a state analysis
  DeviceId device;
  std::string device_reason;  // "it holds the recorded OOM", "--device", ...
  std::string source;  // "PyTorch snapshot (generation 4)"
  // The stack of each live block by address (the snapshot's own segments
  // only: a replayed state does not carry them), ids of recording's table.
  absl::flat_hash_map<uint64_t, uint32_t> frames;
  std::string where;     // "the snapshot's segments (...)" or "after event 421 (device_traces[1][421])"
  std::string capacity;  // "84298432512 B from the recorded OOM", "unlimited (...)", ...
  std::vector<std::string> settings;  // options taken from the snapshot, "key=value"
  std::vector<std::string> notes;     // e.g. devices with segments besides this one
};

absl::StatusOr<InspectedState> LoadInspectedState(const SourceOptions& options);
// The same for a recording already open (`hbmsim replay` of a state-only
// snapshot hands its recording over rather than reading the file again).
absl::StatusOr<InspectedState> InspectRecording(std::shared_ptr<const Recording> recording,
                                                const SourceOptions& options);

}  // namespace hbmsim::sim::inspect

#endif  // HBMSIM_SIM_INSPECT_INSPECT_SOURCE_H_
