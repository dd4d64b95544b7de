#include "sim/viz/memory_viz.h"

#include "sim/dumps/memory_snapshot.h"
#include "trace/pickle/pickle_writer.h"

namespace hbmsim::viz {

using Json = nlohmann::ordered_json;

class MemoryVizRecorder::TapReader : public EventReader {
 public:
  TapReader(MemoryVizRecorder& owner, EventReader& inner) : owner_(owner), inner_(inner) {}
  absl::StatusOr<bool> Next(Event& e) override {
    absl::StatusOr<bool> more = inner_.Next(e);
    if (more.ok() && *more) owner_.Track(e);
    return more;
  }
  const TraceMetadata& metadata() const override { return inner_.metadata(); }
  std::string Location() const override { return inner_.Location(); }

 private:
  MemoryVizRecorder& owner_;
  EventReader& inner_;
};

MemoryVizRecorder::MemoryVizRecorder(const Allocator& allocator, const ReplayOptions& options,
                                     size_t max_entries)
    : allocator_(allocator), device_(options.device), max_entries_(max_entries) {}

MemoryVizRecorder::~MemoryVizRecorder() = default;

EventReader& MemoryVizRecorder::Tap(EventReader& inner) {
  tap_ = std::make_unique<TapReader>(*this, inner);
  return *tap_;
}

void MemoryVizRecorder::Push(Entry e) {
  if (max_entries_ == 0) return;
  if (trace_.size() == max_entries_) {
    trace_.pop_front();
    ++dropped_;
  }
  trace_.push_back(e);
}

// Frees reach us before the engine applies them; only buffers we saw placed
// count (the engine ignores frees of failed allocs, and so do we).
void MemoryVizRecorder::Track(const Event& e) {
  if (!device_) device_ = e.device;
  if (e.device != *device_) return;
  if (e.kind != EventKind::kFree && e.kind != EventKind::kFreeRequested &&
      e.kind != EventKind::kFreeCompleted)
    return;
  auto it = live_.find(e.id);
  if (it == live_.end()) return;
  const Placed p = it->second;
  if (e.kind != EventKind::kFreeCompleted) Push({Action::kFreeRequested, p.addr, p.requested, p.stream});
  if (e.kind != EventKind::kFreeRequested) {
    Push({Action::kFreeCompleted, p.addr, p.requested, p.stream});
    live_.erase(it);
  }
}

void MemoryVizRecorder::OnAlloc(EventIndex, const Event& e, const AllocResult& r) {
  if (!r.ok() || !r.has_offset) return;
  live_[e.id] = {r.offset.value(), e.bytes.value(), e.stream.value()};
  Push({Action::kAlloc, r.offset.value(), e.bytes.value(), e.stream.value()});
}

void MemoryVizRecorder::OnFailure(const FailureRecord& f) {
  Push({Action::kOom, f.free_bytes.value(), f.rounded.value(), 0});
}

void MemoryVizRecorder::OnPolicyEvent(EventIndex, const PolicyEvent& e) {
  switch (e.kind) {
    case PolicyEventKind::kRegionAdded:
      return Push({Action::kSegmentAlloc, e.offset.value(), e.bytes.value(), 0});
    case PolicyEventKind::kRegionExtended:
      return Push({Action::kSegmentMap, e.offset.value(), e.bytes.value(), 0});
    case PolicyEventKind::kRegionReleased:
      // Expandable segments unmap pages without freeing the segment.
      return Push({e.detail == kRegionPagesUnmapped ? Action::kSegmentUnmap : Action::kSegmentFree,
                   e.offset.value(), e.bytes.value(), 0});
    default:
      return;
  }
}

namespace {

std::string_view ActionName(int a) {
  static constexpr std::string_view kNames[] = {
      "alloc",        "free_requested", "free_completed", "segment_alloc",
      "segment_free", "segment_map",    "segment_unmap",  "oom"};
  return kNames[a];
}

Json Segment(const RegionSnapshot& r) {
  Json blocks = Json::array();
  uint64_t allocated = 0, requested = 0;
  for (const BlockInfo& b : r.blocks) {
    const bool active = b.state == BlockState::kInUse || b.state == BlockState::kPendingFree ||
                        b.state == BlockState::kProgram;
    const uint64_t req = !active ? 0 : b.state == BlockState::kProgram ? b.size.value() : b.requested.value();
    if (active) allocated += b.size.value();
    requested += req;
    blocks.push_back({{"address", b.offset.value()},
                      {"size", b.size.value()},
                      {"requested_size", req},
                      {"state", TorchBlockStateName(b.state)},
                      {"frames", Json::array()}});
  }
  return {{"device", 0},
          {"address", r.region.base.value()},
          {"total_size", r.region.size.value()},
          {"allocated_size", allocated},
          {"active_size", allocated},
          {"requested_size", requested},
          {"stream", 0},
          {"segment_type", "large"},
          {"segment_pool_id", Json::array({0, 0})},
          {"is_expandable", false},
          {"frames", Json::array()},
          {"blocks", std::move(blocks)}};
}

}  // namespace

Json MemoryVizRecorder::Snapshot(const Json& settings) const {
  Json segments = Json::array();
  for (const RegionSnapshot& r : TakeMemorySnapshot(allocator_)) segments.push_back(Segment(r));
  Json trace = Json::array();
  for (const Entry& e : trace_) {
    Json entry = {{"action", ActionName(static_cast<int>(e.action))}};
    entry[e.action == Action::kOom ? "device_free" : "addr"] = e.addr;
    entry["size"] = e.size;
    entry["stream"] = e.stream;
    entry["frames"] = Json::array();
    trace.push_back(std::move(entry));
  }
  Json s = settings;
  s["trace_alloc_max_entries"] = max_entries_;
  s["trace_alloc_overflowed"] = dropped_ > 0;
  return {{"segments", std::move(segments)},
          {"device_traces", Json::array({std::move(trace)})},
          {"allocator_settings", std::move(s)}};
}

namespace {

void Write(const Json& v, PickleWriter& w, bool as_tuple = false) {
  switch (v.type()) {
    case Json::value_t::null:
      return w.None();
    case Json::value_t::boolean:
      return w.Bool(v.get<bool>());
    case Json::value_t::number_integer:
      return w.Int(v.get<int64_t>());
    case Json::value_t::number_unsigned:
      return w.UInt(v.get<uint64_t>());
    case Json::value_t::number_float:
      return w.Float(v.get<double>());
    case Json::value_t::string:
      return w.String(v.get_ref<const std::string&>());
    case Json::value_t::array:
      if (as_tuple && v.size() == 2) {
        w.BeginTuple2();
        Write(v[0], w);
        Write(v[1], w);
        return w.EndTuple2();
      }
      w.BeginList();
      for (const Json& x : v) Write(x, w);
      return w.EndList();
    case Json::value_t::object:
      w.BeginDict();
      for (const auto& [k, x] : v.items()) {
        w.String(k);
        Write(x, w, k == "segment_pool_id");
      }
      return w.EndDict();
    default:
      return w.None();
  }
}

}  // namespace

std::string SnapshotPickle(const Json& snapshot) {
  PickleWriter w;
  Write(snapshot, w);
  return w.Finish();
}

}  // namespace hbmsim::viz
