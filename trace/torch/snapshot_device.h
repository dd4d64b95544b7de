// Internal to snapshot_events*.cc: what SnapshotEventReader keeps per device.
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_DEVICE_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_DEVICE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim::trace {

// A block live at the start of a device's trace and the id its events use.
struct PreexistingBlock {
  uint64_t id = 0;
  size_t segment = 0;  // index into InitialState::segments
  size_t block = 0;    // index into that segment's blocks
};

struct SnapshotEventReader::DeviceState {
  DeviceId device;
  std::shared_ptr<const InitialState> initial;  // shared by every reader of the snapshot
  std::vector<PreexistingBlock> preexisting;  // segment, then address order
  uint64_t first_trace_id = 0;                // the id of the first alloc/oom of its trace
};

// The device's trace entries; nullptr when the snapshot has no trace for it.
const std::vector<TraceEntry>* EntriesOf(const Snapshot& snap, DeviceId d);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_DEVICE_H_
