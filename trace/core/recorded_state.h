// The allocator state a recording was written in: a PyTorch snapshot's own
// `segments` (what memory_snapshot() showed when the file was dumped), for one
// device. A snapshot taken without _record_memory_history holds this and no
// trace, and it is exactly what a user has at an OOM; `hbmsim inspect` (and
// `replay` of such a file) analyses it through the policy's seed hook.
#ifndef HBMSIM_TRACE_CORE_RECORDED_STATE_H_
#define HBMSIM_TRACE_CORE_RECORDED_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "trace/core/recorded.h"

namespace hbmsim::trace {

struct RecordedState {
  DeviceId device;
  std::vector<StartSegment> segments;  // ascending by address; live blocks get ids 1, 2, ...
  // The stack of each live block (a list id of the recording's ContextTable),
  // by block address; blocks recorded without frames are absent.
  absl::flat_hash_map<uint64_t, uint32_t> frames;
  std::vector<DeviceId> devices_with_segments;  // ascending
  uint64_t trace_entries = 0;                   // of `device`'s trace
};

// Every device's state, made once for the recording's facts
// (trace/formats/recorded_facts.h).
struct RecordedStates {
  std::vector<DeviceId> devices_with_segments;  // ascending
  // The device shown when none is asked for: the first holding a segment,
  // else the first with a trace, else device 0 (an empty allocator is a state too).
  DeviceId first;
  // Each device holding a segment or with a trace entry.
  std::map<DeviceId, RecordedState> by_device;

  // `device`'s state (empty when it holds nothing), else `first`'s.
  RecordedState For(std::optional<DeviceId> device) const {
    const DeviceId d = device.value_or(first);
    if (const auto it = by_device.find(d); it != by_device.end()) return it->second;
    RecordedState empty;
    empty.device = d;
    empty.devices_with_segments = devices_with_segments;
    return empty;
  }
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_RECORDED_STATE_H_
