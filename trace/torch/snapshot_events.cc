#include "trace/torch/snapshot_events.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_device.h"

namespace hbmsim::trace {
namespace {

std::string DeviceList(const std::vector<DeviceId>& devices) {
  if (devices.empty()) return "none";
  std::string out;
  for (DeviceId d : devices) out += fmt::format("{}{}", out.empty() ? "" : ", ", d.value());
  return out;
}

}  // namespace

const std::vector<TraceEntry>* EntriesOf(const Snapshot& snap, DeviceId d) {
  if (d.value() >= snap.device_traces.size()) return nullptr;
  return &snap.device_traces[d.value()].entries;
}

std::vector<DeviceId> DevicesWithTraces(const Snapshot& snap) {
  std::vector<DeviceId> out;
  for (size_t i = 0; i < snap.device_traces.size(); ++i) {
    if (!snap.device_traces[i].entries.empty()) out.push_back(DeviceId(i));
  }
  return out;
}

absl::StatusOr<DeviceId> ChooseSnapshotDevice(const Snapshot& snap, std::optional<DeviceId> wanted) {
  const std::vector<DeviceId> with = DevicesWithTraces(snap);
  if (!wanted && !with.empty()) return with.front();
  const DeviceId d = wanted.value_or(DeviceId(0));
  const std::vector<TraceEntry>* entries = EntriesOf(snap, d);
  if (entries != nullptr && !entries->empty()) return d;
  return absl::InvalidArgumentError(fmt::format("{}: no trace for device {} (devices with traces: {})",
                                                snap.file_name, d.value(), DeviceList(with)));
}

SnapshotEventReader::SnapshotEventReader(std::shared_ptr<const Snapshot> snap, std::vector<DeviceId> devices,
                                         std::shared_ptr<InitialStateCache> starts)
    : snap_(std::move(snap)), starts_(starts != nullptr ? std::move(starts) : std::make_shared<InitialStateCache>()) {
  metadata_.entries.emplace_back("source", "torch-snapshot");
  metadata_.entries.emplace_back("generation", fmt::format("{}", snap_->generation));
  metadata_.entries.emplace_back("devices", DeviceList(devices));
  BuildDevices(devices);
  StartDevice();
}

SnapshotEventReader::~SnapshotEventReader() = default;

absl::StatusOr<std::unique_ptr<SnapshotEventReader>> SnapshotEventReader::Open(const std::string& path) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(path);
  if (!snap.ok()) return snap.status();
  auto shared = std::make_shared<const Snapshot>(*std::move(snap));
  std::vector<DeviceId> devices = DevicesWithTraces(*shared);
  return std::make_unique<SnapshotEventReader>(std::move(shared), std::move(devices));
}

absl::StatusOr<std::unique_ptr<SnapshotEventReader>> SnapshotEventReader::OpenDevice(
    const std::string& path, std::optional<DeviceId> device) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(path);
  if (!snap.ok()) return snap.status();
  absl::StatusOr<DeviceId> chosen = ChooseSnapshotDevice(*snap, device);
  if (!chosen.ok()) return chosen.status();
  auto shared = std::make_shared<const Snapshot>(*std::move(snap));
  return std::make_unique<SnapshotEventReader>(std::move(shared), std::vector<DeviceId>{*chosen});
}

// Ids are fixed up front so a device's preexisting ids are known before any
// event is read (the torch replay seeds them first).
void SnapshotEventReader::BuildDevices(const std::vector<DeviceId>& devices) {
  uint64_t id = 1;
  for (DeviceId d : devices) {
    auto s = std::make_unique<DeviceState>();
    s->device = d;
    s->initial = starts_->Of(*snap_, d);
    for (size_t i = 0; i < s->initial->segments.size(); ++i) {
      const std::vector<InitialBlock>& blocks = s->initial->segments[i].blocks;
      for (size_t k = 0; k < blocks.size(); ++k) {
        if (blocks[k].live) s->preexisting.push_back({id++, i, k});
      }
    }
    s->first_trace_id = id;
    if (const std::vector<TraceEntry>* entries = EntriesOf(*snap_, d)) {
      for (const TraceEntry& t : *entries) {
        id += t.action == TraceAction::kAlloc || t.action == TraceAction::kOom;
      }
    }
    devices_.push_back(std::move(s));
  }
}

void SnapshotEventReader::StartDevice() {
  phase_ = Phase::kPreexisting;
  cursor_ = 0;
  entry_.reset();
  live_.clear();
  if (device_ >= devices_.size()) return;
  const DeviceState& s = *devices_[device_];
  next_id_ = s.first_trace_id;
  for (const PreexistingBlock& p : s.preexisting) {
    const InitialBlock& b = s.initial->segments[p.segment].blocks[p.block];
    live_[b.address.value()] = LiveBlock{p.id, b.pending_free};
  }
}

absl::StatusOr<bool> SnapshotEventReader::Next(Event& e) {
  while (device_ < devices_.size()) {
    e = Event();
    e.device = devices_[device_]->device;
    if (oom_id_) {  // the second half of an oom entry
      e.kind = EventKind::kFree;
      e.id = *std::exchange(oom_id_, std::nullopt);
      return true;
    }
    if (phase_ != Phase::kTrace && NextPreexisting(e)) return true;
    const std::vector<TraceEntry>* entries = EntriesOf(*snap_, devices_[device_]->device);
    if (entries != nullptr && cursor_ < entries->size()) {
      entry_ = cursor_;
      FromEntry(cursor_++, e);
      return true;
    }
    ++device_;
    StartDevice();
  }
  return false;
}

// One alloc per live block; a block already pending free follows its alloc
// with a free_requested, so its memory stays held until free_completed.
bool SnapshotEventReader::NextPreexisting(Event& e) {
  const DeviceState& s = *devices_[device_];
  if (cursor_ >= s.preexisting.size()) {
    phase_ = Phase::kTrace;
    cursor_ = 0;
    return false;
  }
  const PreexistingBlock& p = s.preexisting[cursor_];
  const InitialSegment& seg = s.initial->segments[p.segment];
  const InitialBlock& b = seg.blocks[p.block];
  e.id = p.id;
  e.stream = seg.stream;
  if (phase_ == Phase::kPendingOfPreexisting) {
    e.kind = EventKind::kFreeRequested;
    phase_ = Phase::kPreexisting;
    ++cursor_;
    return true;
  }
  context_ = EventContext{b.frames, true, 0, 0, 0};
  e.kind = EventKind::kAlloc;
  // gen1 blocks may lack a requested size: the block size is what it held.
  e.bytes = b.requested_size.is_zero() ? b.size : b.requested_size;
  e.addr = b.address.value();
  e.tag = kStartStateTag;
  if (b.pending_free) {
    phase_ = Phase::kPendingOfPreexisting;
  } else {
    ++cursor_;
  }
  return true;
}

void SnapshotEventReader::FromEntry(size_t index, Event& e) {
  const TraceEntry& t = (*EntriesOf(*snap_, devices_[device_]->device))[index];
  e.stream = t.stream;
  context_ = snap_->ContextOf(t);
  // Devices are read one after another, each with its own clock readings, but
  // t= may never go back (trace/core/validator.h): an earlier stamp is raised
  // to the latest one, as the RMM reader does, so a converted multi-device
  // snapshot reads back.
  if (t.has_time) {
    last_time_us_ = std::max(t.time, last_time_us_.value_or(0));
    e.time_us = last_time_us_;
  }
  switch (t.action) {
    case TraceAction::kAlloc:
      e.kind = EventKind::kAlloc;
      e.id = next_id_++;
      e.bytes = t.size;
      e.addr = t.addr.value();
      live_[t.addr.value()] = LiveBlock{e.id, false};  // a stale block at this address is dropped
      return;
    case TraceAction::kOom:
      e.kind = EventKind::kAlloc;
      e.id = next_id_++;
      e.bytes = t.size;  // already rounded; rounding it again changes nothing
      e.tag = "oom";
      oom_id_ = e.id;
      return;
    case TraceAction::kFreeRequested:
    case TraceAction::kFreeCompleted:
    case TraceAction::kFree:
      FreeEvent(index, e);
      return;
    default:
      MarkEvent(index, "", e);
  }
}

void SnapshotEventReader::FreeEvent(size_t index, Event& e) {
  const TraceEntry& t = (*EntriesOf(*snap_, devices_[device_]->device))[index];
  auto it = live_.find(t.addr.value());
  const bool requesting = t.action == TraceAction::kFreeRequested;
  if (it == live_.end() || (requesting && it->second.free_requested)) {
    MarkEvent(index, "unmatched_", e);
    return;
  }
  e.id = it->second.id;
  if (requesting) {
    e.kind = EventKind::kFreeRequested;
    it->second.free_requested = true;
    return;
  }
  // A free_completed with no free_requested before it is tolerated as `free`.
  const bool completes = t.action == TraceAction::kFreeCompleted && it->second.free_requested;
  e.kind = completes ? EventKind::kFreeCompleted : EventKind::kFree;
  live_.erase(it);
}

void SnapshotEventReader::MarkEvent(size_t index, std::string_view prefix, Event& e) {
  const TraceEntry& t = (*EntriesOf(*snap_, devices_[device_]->device))[index];
  e.kind = EventKind::kMark;
  context_.allocator_action = true;
  const std::string_view name =
      t.action == TraceAction::kOther && t.other_action < snap_->other_action_names.size()
          ? std::string_view(snap_->other_action_names[t.other_action])
          : TraceActionName(t.action);
  label_ = fmt::format("{}{}:addr={:#x},size={}", prefix, name, t.addr.value(), t.size.value());
  e.label = label_;
}

const ContextTable* SnapshotEventReader::context_table() const { return &snap_->context; }

std::string SnapshotEventReader::Location() const {
  if (device_ >= devices_.size()) return fmt::format("{}: end", snap_->file_name);
  const uint64_t d = devices_[device_]->device.value();
  if (entry_) return fmt::format("{}: device_traces[{}][{}]", snap_->file_name, d, *entry_);
  return fmt::format("{}: device {} preexisting block {}", snap_->file_name, d, cursor_);
}

}  // namespace hbmsim::trace
