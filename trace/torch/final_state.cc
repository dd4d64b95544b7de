#include "trace/torch/final_state.h"

#include <algorithm>
#include <set>

#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_device.h"

namespace hbmsim {
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

DeviceId ChooseDevice(const RecordedState& s, const Snapshot& snap, std::optional<DeviceId> wanted) {
  if (wanted) return *wanted;
  if (!s.devices_with_segments.empty()) return s.devices_with_segments.front();
  const std::vector<DeviceId> traced = DevicesWithTraces(snap);
  return traced.empty() ? DeviceId(0) : traced.front();
}

}  // namespace

RecordedState SnapshotFinalState(const Snapshot& snap, std::optional<DeviceId> device) {
  RecordedState s;
  std::set<uint64_t> with_segments;
  for (const SnapshotSegment& seg : snap.segments) with_segments.insert(seg.device.value());
  for (uint64_t d : with_segments) s.devices_with_segments.push_back(DeviceId(d));
  s.device = ChooseDevice(s, snap, device);
  std::vector<const SnapshotSegment*> mine;
  for (const SnapshotSegment& seg : snap.segments) {
    if (seg.device == s.device) mine.push_back(&seg);
  }
  std::stable_sort(mine.begin(), mine.end(), [](const SnapshotSegment* a, const SnapshotSegment* b) {
    return a->address < b->address;
  });
  uint64_t next_id = 1;
  for (const SnapshotSegment* seg : mine) s.segments.push_back(ToStart(*seg, next_id, s));
  if (const std::vector<TraceEntry>* entries = EntriesOf(snap, s.device)) s.trace_entries = entries->size();
  return s;
}

bool SnapshotIsStateOnly(const Snapshot& snap) { return DevicesWithTraces(snap).empty(); }

}  // namespace hbmsim
