#include "trace/torch/final_state.h"

#include <algorithm>
#include <set>

#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_device.h"

namespace hbmsim::trace {
namespace {

StartSegment ToStart(const SnapshotSegment& seg, uint64_t& next_id, RecordedState& state) {
  StartSegment out{
      seg.address, seg.total_size, seg.stream, seg.type == SegmentType::kSmall, seg.is_expandable, {}};
  for (const SnapshotBlock& b : seg.blocks) {
    const bool live = b.state != BlockState::kFree;
    out.blocks.push_back({b.address, b.size, b.requested_size, live, b.state == BlockState::kPendingFree,
                          live ? next_id++ : 0});
    if (live && b.frames != 0) state.frames[b.address.value()] = b.frames;
  }
  return out;
}

// The device shown when none is asked for: the first holding a segment,
// else the first with a trace, else device 0.
DeviceId FirstShownDevice(const RecordedStates& s, const std::vector<DeviceId>& traced) {
  if (!s.devices_with_segments.empty()) return s.devices_with_segments.front();
  return traced.empty() ? DeviceId(0) : traced.front();
}

RecordedState StateOfDevice(const Snapshot& snap, DeviceId device,
                            const std::vector<DeviceId>& with_segments) {
  RecordedState s;
  s.device = device;
  s.devices_with_segments = with_segments;
  std::vector<const SnapshotSegment*> mine;
  for (const SnapshotSegment& seg : snap.segments) {
    if (seg.device == device) mine.push_back(&seg);
  }
  std::stable_sort(mine.begin(), mine.end(), [](const SnapshotSegment* a, const SnapshotSegment* b) {
    return a->address < b->address;
  });
  uint64_t next_id = 1;
  for (const SnapshotSegment* seg : mine) s.segments.push_back(ToStart(*seg, next_id, s));
  if (const std::vector<TraceEntry>* entries = EntriesOf(snap, device)) s.trace_entries = entries->size();
  return s;
}

}  // namespace

RecordedStates SnapshotFinalStates(const Snapshot& snap) {
  RecordedStates out;
  std::set<uint64_t> with_segments;
  for (const SnapshotSegment& seg : snap.segments) with_segments.insert(seg.device.value());
  for (uint64_t d : with_segments) out.devices_with_segments.push_back(DeviceId(d));
  const std::vector<DeviceId> traced = DevicesWithTraces(snap);
  out.first = FirstShownDevice(out, traced);
  std::set<DeviceId> devices(out.devices_with_segments.begin(), out.devices_with_segments.end());
  devices.insert(traced.begin(), traced.end());
  for (const DeviceId d : devices)
    out.by_device.emplace(d, StateOfDevice(snap, d, out.devices_with_segments));
  return out;
}

bool SnapshotIsStateOnly(const Snapshot& snap) { return DevicesWithTraces(snap).empty(); }

}  // namespace hbmsim::trace
