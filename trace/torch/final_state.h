// A snapshot's own segments (the state when it was taken) for one device, in
// the plain structs of snapshot_events.h, for tools that analyse that state
// rather than replay the trace: every generation and form, the bare list of
// torch.cuda.memory_snapshot() included, with or without a trace.
#ifndef HBMSIM_TRACE_TORCH_FINAL_STATE_H_
#define HBMSIM_TRACE_TORCH_FINAL_STATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {

struct FinalState {
  std::string file_name;
  int generation = 0;
  bool bare_list = false;
  DeviceId device;
  std::vector<StartSegment> segments;  // ascending by address; live blocks get ids 1, 2, ...
  std::optional<RecordedSettings> settings;
  std::vector<DeviceId> devices_with_segments;
  std::vector<DeviceId> devices_with_traces;
  size_t trace_entries = 0;  // on `device`
};

// `device`, else the first device holding a segment, else the first with a
// trace, else device 0 (an empty allocator is a state too).
absl::StatusOr<FinalState> LoadFinalState(const std::string& path, std::optional<DeviceId> device);

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_TORCH_FINAL_STATE_H_
