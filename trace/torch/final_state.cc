#include "trace/torch/final_state.h"

#include <algorithm>
#include <set>

#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_device.h"

namespace hbmsim {
namespace {

StartSegment ToStart(const SnapshotSegment& seg, uint64_t& next_id) {
  StartSegment out{
      seg.address, seg.total_size, seg.stream, seg.type == SegmentType::kSmall, seg.is_expandable, {}};
  for (const SnapshotBlock& b : seg.blocks) {
    const bool live = b.state != BlockState::kFree;
    out.blocks.push_back({b.address, b.size, b.requested_size, live,
                          b.state == BlockState::kPendingFree, live ? next_id++ : 0});
  }
  return out;
}

DeviceId ChooseDevice(const FinalState& s, std::optional<DeviceId> wanted) {
  if (wanted) return *wanted;
  if (!s.devices_with_segments.empty()) return s.devices_with_segments.front();
  if (!s.devices_with_traces.empty()) return s.devices_with_traces.front();
  return DeviceId(0);
}

}  // namespace

absl::StatusOr<FinalState> LoadFinalState(const std::string& path, std::optional<DeviceId> device) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(path);
  if (!snap.ok()) return snap.status();
  FinalState s;
  s.file_name = snap->file_name;
  s.generation = snap->generation;
  s.bare_list = snap->bare_list;
  std::set<uint64_t> with_segments;
  for (const SnapshotSegment& seg : snap->segments) with_segments.insert(seg.device.value());
  for (uint64_t d : with_segments) s.devices_with_segments.push_back(DeviceId(d));
  s.devices_with_traces = DevicesWithTraces(*snap);
  s.device = ChooseDevice(s, device);
  std::vector<const SnapshotSegment*> mine;
  for (const SnapshotSegment& seg : snap->segments) {
    if (seg.device == s.device) mine.push_back(&seg);
  }
  std::stable_sort(mine.begin(), mine.end(), [](const SnapshotSegment* a, const SnapshotSegment* b) {
    return a->address < b->address;
  });
  uint64_t next_id = 1;
  for (const SnapshotSegment* seg : mine) s.segments.push_back(ToStart(*seg, next_id));
  if (const std::vector<TraceEntry>* entries = EntriesOf(*snap, s.device)) s.trace_entries = entries->size();
  if (snap->allocator_settings) {
    const AllocatorSettings& a = *snap->allocator_settings;
    s.settings = RecordedSettings{a.alloc_conf, a.max_split_size, a.expandable_segments,
                                  a.garbage_collection_threshold, a.roundup_power2_divisions};
  }
  return s;
}

}  // namespace hbmsim
