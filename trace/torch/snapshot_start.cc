// SnapshotEventReader's views for the replay: the start state with its ids,
// the recorded settings, the capacity a recorded OOM implies, and the side
// information behind the current event.
#include "absl/container/flat_hash_set.h"
#include "trace/torch/snapshot_device.h"

namespace hbmsim::trace {
namespace {

SideAction SideActionOf(TraceAction a) {
  switch (a) {
    case TraceAction::kSegmentAlloc:
      return SideAction::kSegmentAlloc;
    case TraceAction::kSegmentFree:
      return SideAction::kSegmentFree;
    case TraceAction::kSegmentMap:
      return SideAction::kSegmentMap;
    case TraceAction::kSegmentUnmap:
      return SideAction::kSegmentUnmap;
    case TraceAction::kOom:
      return SideAction::kOom;
    default:
      return SideAction::kOther;
  }
}

}  // namespace

const std::string& SnapshotEventReader::file_name() const { return snap_->file_name; }
int SnapshotEventReader::generation() const { return snap_->generation; }
DeviceId SnapshotEventReader::device(size_t i) const { return devices_[i]->device; }

std::optional<RecordedSettings> SnapshotEventReader::settings() const {
  if (!snap_->allocator_settings) return std::nullopt;
  const AllocatorSettings& a = *snap_->allocator_settings;
  return RecordedSettings{a.alloc_conf,
                          a.max_split_size,
                          a.expandable_segments,
                          a.garbage_collection_threshold,
                          a.roundup_power2_divisions,
                          Framework::kUnknown,
                          std::nullopt,
                          std::nullopt};
}

std::vector<StartSegment> SnapshotEventReader::StartSegments(size_t i) const {
  const DeviceState& s = *devices_[i];
  std::vector<StartSegment> out;
  for (const InitialSegment& seg : s.initial->segments) {
    StartSegment o{
        seg.address, seg.total_size, seg.stream, seg.type == SegmentType::kSmall, seg.is_expandable, {}};
    for (const InitialBlock& b : seg.blocks) {
      o.blocks.push_back({b.address, b.size, b.requested_size, b.live, b.pending_free, 0});
    }
    out.push_back(std::move(o));
  }
  for (const PreexistingBlock& p : s.preexisting) out[p.segment].blocks[p.block].id = p.id;
  return out;
}

StartSummary SnapshotEventReader::Start(size_t i) const {
  const InitialState& s = *devices_[i]->initial;
  StartSummary out{s.segments.size(), s.live_blocks, s.live_blocks_freed_in_trace, s.issue_count, {}, {},
                   std::nullopt, {}};
  for (const InitialSegment& seg : s.segments) {
    out.reserved += seg.total_size;
    for (const InitialBlock& b : seg.blocks) {
      if (b.live) out.live_bytes += b.size;
    }
  }
  return out;
}

uint64_t SnapshotEventReader::EventCount(size_t i) const {
  const DeviceState& s = *devices_[i];
  uint64_t n = s.preexisting.size();
  for (const PreexistingBlock& p : s.preexisting) n += s.initial->segments[p.segment].blocks[p.block].pending_free;
  if (const std::vector<TraceEntry>* entries = EntriesOf(*snap_, s.device)) {
    n += entries->size();
    for (const TraceEntry& t : *entries) n += t.action == TraceAction::kOom;
  }
  return n;
}

std::optional<OomCapacity> SnapshotEventReader::CapacityAtFirstOom(size_t i) const {
  const DeviceState& s = *devices_[i];
  const std::vector<TraceEntry>* entries = EntriesOf(*snap_, s.device);
  if (entries == nullptr) return std::nullopt;
  Bytes reserved;
  for (const InitialSegment& seg : s.initial->segments) reserved += seg.total_size;
  for (size_t k = 0; k < entries->size(); ++k) {
    const TraceEntry& t = (*entries)[k];
    switch (t.action) {
      case TraceAction::kSegmentAlloc:
      case TraceAction::kSegmentMap:
        reserved += t.size;
        break;
      case TraceAction::kSegmentFree:
      case TraceAction::kSegmentUnmap:
        reserved = reserved.SaturatingSub(t.size);
        break;
      case TraceAction::kOom:
        return OomCapacity{reserved + t.device_free, reserved, t.device_free, k};
      default:
        break;
    }
  }
  return std::nullopt;
}

HistoryAddresses SnapshotEventReader::FinalHistory(size_t i) const {
  const DeviceId device = devices_[i]->device;
  // Addresses allocated by the trace and not freed again.
  absl::flat_hash_set<uint64_t> trace_live;
  if (const std::vector<TraceEntry>* entries = EntriesOf(*snap_, device)) {
    for (const TraceEntry& t : *entries) {
      if (t.action == TraceAction::kAlloc) trace_live.insert(t.addr.value());
      if (t.action == TraceAction::kFreeCompleted || t.action == TraceAction::kFree) {
        trace_live.erase(t.addr.value());
      }
    }
  }
  HistoryAddresses out;
  for (const SnapshotSegment& seg : snap_->segments) {
    if (seg.device != device) continue;
    for (const SnapshotBlock& b : seg.blocks) {
      if (b.history.empty()) continue;
      const bool live = b.state != BlockState::kFree;
      out.past += b.history.size() - (live ? 1 : 0);
      if (live && !trace_live.contains(b.history.front().addr.value())) {
        out.live.push_back({b.history.front().addr.value(), b.history.front().real_size.value()});
      }
    }
  }
  return out;
}

std::optional<SideEntry> SnapshotEventReader::current_side() const {
  if (!entry_ || device_ >= devices_.size()) return std::nullopt;
  const TraceEntry& t = (*EntriesOf(*snap_, devices_[device_]->device))[*entry_];
  const SideAction a = SideActionOf(t.action);
  if (a == SideAction::kOther && t.action != TraceAction::kSnapshot && t.action != TraceAction::kOther) {
    return std::nullopt;  // alloc and frees are events, not side information
  }
  return SideEntry{a, t.addr.value(), t.size.value(), t.device_free.value()};
}

}  // namespace hbmsim::trace
