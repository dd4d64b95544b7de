#include "sim/viz/memory_viz.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "sim/dumps/memory_snapshot.h"

namespace hbmsim::sim::viz {

MemoryVizRecorder::MemoryVizRecorder(const Allocator& allocator, const ReplayOptions& options,
                                     size_t max_entries)
    : allocator_(allocator), device_(options.device), max_entries_(max_entries), peak_from_(options.peak_from) {}

MemoryVizRecorder::~MemoryVizRecorder() = default;

EventReader& MemoryVizRecorder::Tap(EventReader& inner) {
  tap_ = std::make_unique<TapReader<MemoryVizRecorder>>(*this, inner);
  recorded_ = inner.context_table();
  return *tap_;
}

void MemoryVizRecorder::Push(Action action, uint64_t addr, uint64_t size, uint64_t stream, const Context& c) {
  if (max_entries_ == 0 || in_start_state_) return;
  if (trace_.size() == max_entries_) {
    trace_.pop_front();
    ++dropped_;
  }
  trace_.push_back(Entry{action, addr, size, stream, now_us_, c});
}

// Called as the engine reads each event, before it replays it: what the
// policy does next (allocs, segment events, failures) belongs to this event.
void MemoryVizRecorder::Track(const Event& e) {
  ++read_;
  if (!device_) device_ = e.device;
  if (e.device != *device_) return;
  if (sync_pending_) Sync();
  if (IsProgramEvent(e.kind)) sync_pending_ = true;
  if (in_start_state_) {
    const bool start_alloc = e.kind == EventKind::kAlloc && e.tag == kStartStateTag;
    const bool start_pending = e.kind == EventKind::kFreeRequested && live_.contains(e.id);
    in_start_state_ = read_ <= peak_from_ || start_alloc || start_pending;
  }
  const EventContext c = tap_->context();
  const bool recorded_category = c.has_category && recorded_ != nullptr;
  const std::string_view category =
      recorded_category ? std::string_view(recorded_->string(c.category)) : e.tag;
  now_us_ = e.time_us;
  now_stream_ = e.stream.value();
  now_.frames = recorded_ != nullptr ? c.frames : 0;
  now_.category = e.kind == EventKind::kAlloc ? labels_.AddString(category) : 0;
  now_.user_metadata = recorded_ != nullptr ? labels_.AddString(recorded_->string(c.user_metadata)) : 0;
  now_.compile_context = recorded_ != nullptr ? labels_.AddString(recorded_->string(c.compile_context)) : 0;
  if (!in_start_state_ && now_.category != 0) any_category_ = true;
  TrackFree(e);
}

// Frees reach us before the engine applies them; only buffers we saw placed
// count (the engine ignores frees of failed allocs, and so do we). A free
// carries the frames of the alloc it ends, as PyTorch records it, unless the
// recording gave it its own; its user metadata and compile context are the
// free's own when recorded (PyTorch stamps each entry when it happens, and a
// block of the start state has no alloc entry to take them from).
void MemoryVizRecorder::TrackFree(const Event& e) {
  if (e.kind != EventKind::kFree && e.kind != EventKind::kFreeRequested &&
      e.kind != EventKind::kFreeCompleted)
    return;
  auto it = live_.find(e.id);
  if (it == live_.end()) return;
  const Placed p = it->second;
  Context c = p.context;
  if (now_.frames != 0) c.frames = now_.frames;
  if (now_.user_metadata != 0) c.user_metadata = now_.user_metadata;
  if (now_.compile_context != 0) c.compile_context = now_.compile_context;
  if (e.kind != EventKind::kFreeCompleted) Push(Action::kFreeRequested, p.addr, p.requested, p.stream, c);
  if (e.kind == EventKind::kFreeRequested) it->second.pending = true;
  if (e.kind != EventKind::kFreeRequested) {
    Push(Action::kFreeCompleted, p.addr, p.requested, p.stream, c);
    extents_.erase(p.addr);
    live_.erase(it);
  }
}

void MemoryVizRecorder::OnAlloc(EventIndex, const Event& e, const AllocResult& r) {
  if (!r.ok() || !r.has_offset) return;
  if (e.addr) {
    ++recorded_allocs_;
    if (*e.addr == r.offset.value()) ++matched_allocs_;
  }
  if (sync_pending_) Sync();  // a defragmentation before this placement comes first
  const uint64_t begin = r.offset.value(), end = begin + std::max<uint64_t>(e.bytes.value(), 1);
  CompletePendingUnder(begin, end);
  auto next = extents_.lower_bound(begin);
  const bool overlaps = (next != extents_.end() && next->first < end) ||
                        (next != extents_.begin() && std::prev(next)->second.end > begin);
  if (overlaps && overlap_.empty())
    overlap_ = fmt::format("alloc id {} at {:#x} overlaps a live buffer", e.id, begin);
  extents_[begin] = {end, e.id};
  live_[e.id] = {r.offset.value(), e.bytes.value(), e.stream.value(), now_};
  Push(Action::kAlloc, r.offset.value(), e.bytes.value(), e.stream.value(), now_);
}

// A policy may place a buffer over one whose free was requested but not
// completed: cuda_async's own stream takes a queued block at once, TPU's
// recovery ladder completes queued frees itself. For the policy that free is
// complete, so the export says so (free_completed) before the alloc that
// reuses the memory; the recording's later free_completed finds no live
// buffer and is skipped, as the engine's CompleteFree is a no-op then.
void MemoryVizRecorder::CompletePendingUnder(uint64_t begin, uint64_t end) {
  auto it = extents_.upper_bound(begin);
  if (it != extents_.begin() && std::prev(it)->second.end > begin) --it;
  while (it != extents_.end() && it->first < end) {
    const auto live = live_.find(it->second.id);
    if (live == live_.end() || !live->second.pending) {
      ++it;
      continue;
    }
    const Placed& p = live->second;
    Push(Action::kFreeCompleted, p.addr, p.requested, p.stream, p.context);
    live_.erase(live);
    it = extents_.erase(it);
  }
}

void MemoryVizRecorder::OnFailure(const FailureRecord& f) {
  if (sync_pending_) Sync();
  Push(Action::kOom, DeviceFree(), f.rounded.value(), now_stream_, now_);
}

// PyTorch's oom entry carries what cudaMemGetInfo reports free: the device's
// memory less what the allocator holds (its pool, the reserved bytes), never
// the free bytes inside that pool, which the failure record counts.
uint64_t MemoryVizRecorder::DeviceFree() const {
  const AllocatorStats s = allocator_.GetStats();
  if (!s.bytes_limit || IsUnlimitedStat(*s.bytes_limit)) return 0;
  const int64_t held = s.pool_bytes.value_or(s.bytes_in_use + s.bytes_reserved);
  return *s.bytes_limit > held ? static_cast<uint64_t>(*s.bytes_limit - held) : 0;
}

void MemoryVizRecorder::OnPolicyEvent(EventIndex, const PolicyEvent& e) {
  Context c = now_;
  c.category = 0;
  const uint64_t stream = e.stream.value_or(now_stream_);
  switch (e.kind) {
    case PolicyEventKind::kDefragmentation:
    case PolicyEventKind::kProgramEvicted:
    case PolicyEventKind::kProgramReloaded:
      sync_pending_ = true;
      return;
    case PolicyEventKind::kRegionAdded:
      return Push(Action::kSegmentAlloc, e.offset.value(), e.bytes.value(), stream, c);
    case PolicyEventKind::kRegionExtended:
      return Push(Action::kSegmentMap, e.offset.value(), e.bytes.value(), stream, c);
    case PolicyEventKind::kRegionReleased:
      // Expandable segments unmap pages without freeing the segment.
      return Push(e.detail == kRegionPagesUnmapped ? Action::kSegmentUnmap : Action::kSegmentFree,
                  e.offset.value(), e.bytes.value(), stream, c);
    default:
      return;
  }
}

void MemoryVizRecorder::Finish() {
  if (sync_pending_) Sync();
}

void MemoryVizRecorder::Move(Action action, uint64_t addr, uint64_t size, const Context& c) {
  if (action == Action::kAlloc) return Push(Action::kAlloc, addr, size, 0, c);
  Push(Action::kFreeRequested, addr, size, 0, c);
  Push(Action::kFreeCompleted, addr, size, 0, c);
}

void MemoryVizRecorder::Sync() {
  sync_pending_ = false;
  std::vector<Change> changes = ChangesSinceSync();
  ApplyChanges(changes);
}

// The buffers and programs whose address the policy changed (or that are
// gone) since the last sync, against the allocator's memory map now.
std::vector<MemoryVizRecorder::Change> MemoryVizRecorder::ChangesSinceSync() const {
  absl::flat_hash_map<uint64_t, uint64_t> buffer_at;
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, uint64_t>> program_at;
  for (const RegionSnapshot& r : TakeMemorySnapshot(allocator_)) {
    for (const BlockInfo& b : r.blocks) {
      if (b.state == BlockState::kInUse || b.state == BlockState::kPendingFree)
        buffer_at[b.id] = b.offset.value();
      if (b.state == BlockState::kProgram) program_at[b.id] = {b.offset.value(), b.size.value()};
    }
  }
  std::vector<Change> changes;
  for (const auto& [id, p] : live_) {
    const auto it = buffer_at.find(id);
    if (it == buffer_at.end() || it->second != p.addr) {
      changes.push_back(
          {p.addr, it == buffer_at.end() ? 0 : it->second, p.requested, false, it == buffer_at.end(), id});
    }
  }
  for (const auto& [id, p] : programs_) {
    const auto it = program_at.find(id);
    if (it == program_at.end() || it->second.first != p.addr)
      changes.push_back({p.addr, 0, p.requested, true, true, id});
  }
  for (const auto& [id, at] : program_at) {
    const auto it = programs_.find(id);
    if (it == programs_.end() || it->second.addr != at.first)
      changes.push_back({~uint64_t{0}, at.first, at.second, true, false, id});
  }
  return changes;
}

void MemoryVizRecorder::ApplyChanges(std::vector<Change>& changes) {
  // Frees before allocs, each in address order (hash order decides nothing).
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return std::tie(a.old_addr, a.new_addr, a.id) < std::tie(b.old_addr, b.new_addr, b.id);
  });
  const Context program{0, labels_.AddString("program"), 0, 0};
  for (const Change& c : changes) {
    if (c.old_addr == ~uint64_t{0}) continue;
    Move(Action::kFreeCompleted, c.old_addr, c.size, c.program ? program : live_[c.id].context);
    if (c.program) programs_.erase(c.id);
    if (!c.program) extents_.erase(c.old_addr);
    if (!c.program && c.gone) live_.erase(c.id);
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return std::tie(a.new_addr, a.id) < std::tie(b.new_addr, b.id);
  });
  for (const Change& c : changes) {
    if (c.gone) continue;
    if (c.program) {
      programs_[c.id] = Placed{c.new_addr, c.size, 0, program};
      any_category_ = true;
      Move(Action::kAlloc, c.new_addr, c.size, program);
    } else {
      live_[c.id].addr = c.new_addr;
      extents_[c.new_addr] = {c.new_addr + std::max<uint64_t>(c.size, 1), c.id};
      Move(Action::kAlloc, c.new_addr, c.size, live_[c.id].context);
    }
  }
}

}  // namespace hbmsim::sim::viz
