#include "trace/torch/snapshot_summary.h"

#include <algorithm>
#include <set>

namespace hbmsim::trace {

SegmentTotals SummarizeSegments(const std::vector<SnapshotSegment>& segments,
                                std::optional<DeviceId> device) {
  SegmentTotals t;
  for (const SnapshotSegment& s : segments) {
    if (device && s.device != *device) continue;
    ++t.segments;
    ++(s.type == SegmentType::kSmall ? t.small_segments : t.large_segments);
    t.reserved += s.total_size;
    for (const SnapshotBlock& b : s.blocks) {
      // A snapshot's blocks are only ever free, in use or pending free
      // (allocator/core/block_state.h); every state is named so that a new
      // one is a compile warning here. A program's reservation is
      // active_allocated, as TorchBlockStateName names it.
      switch (b.state) {
        case BlockState::kInUse:
        case BlockState::kProgram:
          t.active_allocated += b.size;
          t.requested_allocated += b.requested_size;
          break;
        case BlockState::kPendingFree:
          t.pending_free += b.size;
          break;
        case BlockState::kFree:
          t.inactive += b.size;
          t.largest_inactive = std::max(t.largest_inactive, b.size);
          break;
        case BlockState::kUnmapped:
          break;  // no memory behind it: in no total
      }
    }
  }
  return t;
}

std::vector<DeviceId> DevicesWithData(const Snapshot& snap) {
  std::set<DeviceId> devices;
  for (const SnapshotSegment& s : snap.segments) devices.insert(s.device);
  for (const DeviceTrace& t : snap.device_traces) {
    if (!t.entries.empty()) devices.insert(t.device);
  }
  return std::vector<DeviceId>(devices.begin(), devices.end());
}

std::map<std::string, uint64_t> CountTraceActions(const Snapshot& snap) {
  std::map<std::string, uint64_t> counts;
  for (const DeviceTrace& t : snap.device_traces) {
    for (const TraceEntry& e : t.entries) {
      const std::string_view name = e.action == TraceAction::kOther ? snap.other_action_names[e.other_action]
                                                                    : TraceActionName(e.action);
      ++counts[std::string(name)];
    }
  }
  return counts;
}

}  // namespace hbmsim::trace
