#include "sim/engine/replay_engine.h"

#include <algorithm>
#include <string>

#include "fmt/format.h"

namespace hbmsim::sim {
namespace {

// The reader normally rejects these; the engine still never trusts it blindly.
absl::Status BadEvent(const EventReader& reader, const Event& e, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("{}: {} of id {} {}", reader.Location(), EventKindName(e.kind), e.id, why));
}

}  // namespace

ReplayEngine::ReplayEngine(Allocator& allocator, const ReplayOptions& options)
    : allocator_(allocator), options_(options) {
  allocator_.set_observer(this);
  if (options_.numbered_ids) buffers_.KeysAreHomes();
}

ReplayEngine::~ReplayEngine() { allocator_.set_observer(nullptr); }

absl::StatusOr<ReplaySummary> ReplayEngine::Run(EventReader& reader) {
  Event e;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const EventIndex index(summary_.events_read++);
    if (index.value() == options_.peak_from) [[unlikely]]
      StartStateBuilt();
    if (!e.attrs.empty()) [[unlikely]]
      NoteOtherAttributes(e.attrs);
    // SelectDevice's common case inline, as in RunPlain: the selected device, once known.
    if (!summary_.device || e.device != *summary_.device) [[unlikely]] {
      if (!SelectDevice(e.device)) continue;
    }
    ++summary_.events_replayed;
    current_ = index;
    for (ReplayObserver* o : before_event_) o->BeforeEvent(index);
    const uint64_t failures_before = summary_.failures;
    if (absl::Status s = Apply(e, index, reader); !s.ok()) return s;
    if (options_.paranoid) {
      const absl::Status s = allocator_.CheckInvariants();
      if (!s.ok()) {
        return absl::InternalError(fmt::format("{}: event {} ({}): broken invariant in {}: {}",
                                               reader.Location(), index.value(), EventKindName(e.kind),
                                               allocator_.name(), std::string(s.message())));
      }
    }
    if (summary_.failures != failures_before && options_.on_oom == OnOom::kStop) {
      summary_.stopped_at_failure = true;
      break;
    }
  }
  if (summary_.events_read <= options_.peak_from) StartStateBuilt();  // a trace no longer than its start state
  return summary_;
}

ReplaySummary ReplayEngine::RefuseStart(const FailureRecord& f) {
  summary_.device = options_.device;
  summary_.start_state_refused = true;
  summary_.stopped_at_failure = true;
  ReportFailure(f);
  return summary_;
}

void ReplayEngine::NoteOtherAttributes(std::string_view attrs) {
  ++summary_.events_with_other_attributes;
  std::vector<std::string>& keys = summary_.other_attribute_keys;
  for (size_t start = 0; start < attrs.size() && keys.size() < ReplaySummary::kMaxOtherKeys;) {
    const size_t space = std::min(attrs.find(' ', start), attrs.size());
    const std::string_view field = attrs.substr(start, space - start);
    const std::string_view key = field.substr(0, field.find('='));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.emplace_back(key);
    start = space + 1;
  }
}

bool ReplayEngine::SelectDevice(DeviceId device) {
  if (!summary_.device) [[unlikely]]
    summary_.device = options_.device.value_or(device);
  if (device == *summary_.device) [[likely]]
    return true;
  ++summary_.events_other_device;
  std::vector<DeviceId>& seen = summary_.other_devices;
  const auto at = std::lower_bound(seen.begin(), seen.end(), device);
  if ((at == seen.end() || *at != device) && seen.size() < ReplaySummary::kMaxListedDevices) seen.insert(at, device);
  return false;
}

absl::Status ReplayEngine::Apply(const Event& e, EventIndex index, const EventReader& reader) {
  // Alloc and free are nearly every event: keep their dispatch free of the
  // frame the rare kinds need.
  if (e.kind == EventKind::kAlloc) [[likely]]
    return ApplyAlloc(e, index, reader);
  if (e.kind == EventKind::kFree) [[likely]]
    return ApplyFree(e, reader);
  return ApplyOther(e, index, reader);
}

absl::Status ReplayEngine::ApplyOther(const Event& e, EventIndex index, const EventReader& reader) {
  switch (e.kind) {
    case EventKind::kAlloc:
      return ApplyAlloc(e, index, reader);
    case EventKind::kFree:
    case EventKind::kFreeRequested:
    case EventKind::kFreeCompleted:
      return ApplyFree(e, reader);
    case EventKind::kProgramLoad:
    case EventKind::kProgramRun:
    case EventKind::kProgramUnload:
      if (allocator_.SupportsPrograms()) return ApplyProgram(e, index, reader);
      return ApplyProgramAsBuffer(e, index, reader);
    case EventKind::kMark:
      ++summary_.marks;
      for (ReplayObserver* o : observers_) o->OnMark(index, e.label);
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status ReplayEngine::ApplyAlloc(const Event& e, EventIndex index, const EventReader& reader) {
  AllocRequest req;
  req.id = e.buffer();
  req.bytes = e.bytes;
  req.stream = e.stream;
  req.shape = e.shape ? &*e.shape : nullptr;
  req.event = index;
  if ((options_.check_recorded || options_.recorded_bases) && e.addr) req.recorded_address = Offset(*e.addr);
  AllocResult r;
  if (!AllocAs(allocator_, req, r)) return BadEvent(reader, e, "that is still live");
  if (options_.check_recorded && e.addr) {
    ++summary_.recorded.allocs_total;
    if (r.ok() && r.has_offset && r.offset.value() == *e.addr) ++summary_.recorded.allocs_matched;
  }
  for (ReplayObserver* o : observers_) o->OnAlloc(index, e, r);
  if (!r.ok()) {
    ReportFailure({index, e.kind, e.id, e.bytes, r.rounded, r.status, r.free_bytes, r.largest_free_block});
  }
  return absl::OkStatus();
}

absl::Status ReplayEngine::ApplyFree(const Event& e, const EventReader& reader) {
  if (const char* error = FreeAs(allocator_, e.kind, e.id); error != nullptr) return BadEvent(reader, e, error);
  if (e.kind != EventKind::kFreeRequested) {
    for (ReplayObserver* o : observers_) o->OnRelease(current_, e);
  }
  return absl::OkStatus();
}

bool ReplayEngine::PlainAllowed() const {
  if (options_.paranoid || options_.check_recorded || options_.recorded_bases) return false;
  return std::none_of(observers_.begin(), observers_.end(),
                      [](const ReplayObserver* o) { return o->needs_allocs_and_releases(); });
}

Event ReplayEngine::ToEvent(const PlainEvent& p) {
  Event e;
  CopyPlain(p, e);
  return e;
}

void ReplayEngine::StartStateBuilt() {
  if (options_.peak_from == 0) return;
  allocator_.ClearStats();  // the policy's own peaks and counts, as the engine's
  summary_.start_state_allocs = summary_.allocs;
  if (summary_.events_replayed == 0) return;
  summary_.peak_live_bytes = live_bytes_;
  summary_.peak_live_event = current_;
  for (ReplayObserver* o : observers_) o->OnStartStateBuilt(current_);
}

void ReplayEngine::AddLive(Bytes b, EventIndex index) {
  live_bytes_ += b;
  if (live_bytes_ > summary_.peak_live_bytes && index.value() >= options_.peak_from) {
    summary_.peak_live_bytes = live_bytes_;
    summary_.peak_live_event = index;
  }
}

void ReplayEngine::ReportFailure(const FailureRecord& f) {
  ++summary_.failures;
  for (ReplayObserver* o : observers_) o->OnFailure(f);
}

void ReplayEngine::OnPolicyEvent(const PolicyEvent& e) {
  for (ReplayObserver* o : observers_) o->OnPolicyEvent(current_, e);
}

}  // namespace hbmsim::sim
