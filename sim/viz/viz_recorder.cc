#include "sim/viz/viz_recorder.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {

VizRecorder::VizRecorder(const Allocator& allocator, const ReplayOptions& options, Progress* progress,
                         bool record)
    : allocator_(allocator), device_(options.device), progress_(progress), record_(record),
      peak_from_(options.peak_from) {}

VizRecorder::~VizRecorder() = default;

EventReader& VizRecorder::Tap(EventReader& inner) {
  tap_ = std::make_unique<TapReader<VizRecorder>>(*this, inner);
  return *tap_;
}

// Events that only set up the recording's start state (kStartStateTag, and
// those before ReplayOptions::peak_from: a profile's) are not sampled: the timeline starts with the whole start state in place, as
// a policy seeded with it holds it from the first event on.
void VizRecorder::BeforeRead() {
  if (read_ > 0 && record_ && !in_start_state_) Sample(read_ - 1);
  if (progress_ != nullptr) progress_->Tick();
}

void VizRecorder::Finish() {
  if (read_ > 0 && record_ && timeline_.events() < read_) Sample(read_ - 1);
  if (progress_ != nullptr) progress_->Finish();
}

// Mirrors the engine's live-bytes rule (replay_engine.h) for one event.
void VizRecorder::Track(const Event& e) {
  ++read_;
  if (!device_) device_ = e.device;
  if (e.device != *device_) return;
  if (in_start_state_) {
    in_start_state_ = read_ <= peak_from_ || (e.kind == EventKind::kAlloc && e.tag == kStartStateTag) ||
                      (e.kind == EventKind::kFreeRequested && live_buffers_.contains(e.id));
    // The first sample: the whole start state in place, before this event.
    if (!in_start_state_ && read_ >= 2 && record_) Sample(read_ - 2);
  }
  mark_restates_allocator_ = e.kind == EventKind::kMark && tap_->context().allocator_action;
  auto add = [&](absl::flat_hash_map<uint64_t, uint64_t>& m) {
    if (m.emplace(e.id, e.bytes.value()).second) live_requested_ += e.bytes.value();
  };
  auto remove = [&](absl::flat_hash_map<uint64_t, uint64_t>& m) {
    auto it = m.find(e.id);
    if (it == m.end()) return;
    live_requested_ -= it->second;
    m.erase(it);
  };
  switch (e.kind) {
    case EventKind::kAlloc:
      return add(live_buffers_);
    case EventKind::kFree:
    case EventKind::kFreeCompleted:
      return remove(live_buffers_);
    case EventKind::kProgramLoad:
      return add(live_programs_);
    case EventKind::kProgramUnload:
      return remove(live_programs_);
    default:
      return;
  }
}

void VizRecorder::Sample(uint64_t index) {
  const AllocatorStats s = allocator_.GetStats();
  const int64_t in_use = s.bytes_in_use + s.bytes_reserved;
  // An unbounded stat (no limit) has no height to draw: it stays on the axis
  // rather than squashing every other series.
  const auto drawable = [](int64_t v) { return IsUnlimitedStat(v) ? 0 : v; };
  const int64_t pool = drawable(s.pool_bytes.value_or(s.bytes_limit.value_or(0)));
  timeline_.Sample(
      index, {static_cast<int64_t>(live_requested_), in_use, pool, drawable(s.largest_free_block_bytes)});
  MaybeMapPeak(index, in_use);
}

// A map at every new peak could cost O(events × blocks) on a trace that only
// grows, so maps are taken while the blocks walked for them stay within a
// budget of kMapWorkPerEvent per event plus a fixed allowance (so every trace
// of moderate size gets the map at its exact peak). Past the budget, a
// skipped peak is mapped at the next event still at the peak that fits.
void VizRecorder::MaybeMapPeak(uint64_t index, int64_t in_use) {
  if (in_use > peak_in_use_) {
    peak_in_use_ = in_use;
    peak_event_ = index;
    peak_map_stale_ = true;
  }
  if (!peak_map_stale_ || in_use != peak_in_use_) return;
  if (map_work_ > kMapWorkPerEvent * (index + 1) + kMapWorkAllowance) return;
  peak_map_ = TakeAddressMap(allocator_, index,
                             fmt::format("at the peak of bytes in use ({}, event {})",
                                         HumanReadableNumBytes(Bytes(static_cast<uint64_t>(in_use))), index));
  map_work_ += peak_map_.blocks + 1;
  peak_map_stale_ = false;
}

void VizRecorder::Keep(std::vector<Instant>& list, Instant i) {
  if (list.size() >= kMaxInstants) {
    ++dropped_;
    return;
  }
  list.push_back(std::move(i));
}

void VizRecorder::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  if (r.ok()) return;  // the hot path: only a failed request's tag is kept
  failed_alloc_event_ = index.value();
  failed_alloc_tag_.assign(e.tag);
}

void VizRecorder::OnFailure(const FailureRecord& f) {
  const uint64_t index = f.event.value();
  timeline_.Mark(index, kFailureMarker);
  std::string detail =
      fmt::format("{} id {}: {} requested, {} free, largest free block {}", EventKindName(f.event_kind), f.id,
                  HumanReadableNumBytes(f.requested), HumanReadableNumBytes(f.free_bytes),
                  HumanReadableNumBytes(f.largest_free_block_bytes));
  const bool tagged = f.event_kind == EventKind::kAlloc && failed_alloc_event_ == index && !failed_alloc_tag_.empty();
  if (tagged) detail += ", tag=" + failed_alloc_tag_;
  Keep(failures_, {index, std::string(AllocStatusName(f.kind)), std::move(detail)});
  if (first_failure_map_.taken) return;
  first_failure_map_ =
      TakeAddressMap(allocator_, index,
                     fmt::format("at the first failure (event {}, {} of {})", index, AllocStatusName(f.kind),
                                 HumanReadableNumBytes(f.requested)));
}

void VizRecorder::OnPolicyEvent(EventIndex index, const PolicyEvent& e) {
  if (e.kind == PolicyEventKind::kDefragmentation) timeline_.Mark(index.value(), kDefragMarker);
  if (e.kind == PolicyEventKind::kProgramEvicted) timeline_.Mark(index.value(), kEvictionMarker);
  Keep(policy_events_,
       {index.value(), std::string(PolicyEventKindName(e.kind)),
        fmt::format("{} at {:#x}, detail {}", HumanReadableNumBytes(e.bytes), e.offset.value(), e.detail)});
}

// A mark that only restates the recorded allocator's own action (a snapshot's
// segment_alloc, ...) is not a phase of the program: no slice for it.
void VizRecorder::OnMark(EventIndex index, std::string_view label) {
  if (mark_restates_allocator_) return;
  Keep(marks_, {index.value(), std::string(label), ""});
}

}  // namespace hbmsim::sim::viz
