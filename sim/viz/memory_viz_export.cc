// MemoryVizRecorder::Snapshot: the recorded entries and the allocator's final
// memory map as the dict PyTorch's _snapshot() returns (docs/memory-viz-rules.md).
#include <algorithm>
#include <vector>

#include "fmt/format.h"
#include "sim/dumps/memory_snapshot.h"
#include "sim/layer.h"
#include "sim/viz/memory_viz.h"
#include "trace/core/json_text.h"
#include "trace/pickle/pickle_writer.h"

namespace hbmsim::sim::viz {

using Json = nlohmann::ordered_json;

namespace {

std::string_view ActionName(int a) {
  static constexpr std::string_view kNames[] = {
      "alloc",        "free_requested", "free_completed", "segment_alloc",
      "segment_free", "segment_map",    "segment_unmap",  "oom",
      "snapshot"};
  return kNames[a];
}

bool IsActive(BlockState s) {
  return s == BlockState::kInUse || s == BlockState::kPendingFree || s == BlockState::kProgram;
}

// One run of mapped blocks of a region: what PyTorch reports as a segment.
struct Run {
  const RegionSnapshot* region;
  size_t begin, end;  // blocks [begin, end)
};

// A region splits at its unmapped blocks; any other region is one run.
std::vector<Run> MappedRuns(const std::vector<RegionSnapshot>& regions) {
  std::vector<Run> runs;
  for (const RegionSnapshot& r : regions) {
    size_t i = 0;
    while (i < r.blocks.size()) {
      if (r.blocks[i].state == BlockState::kUnmapped) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < r.blocks.size() && r.blocks[j].state != BlockState::kUnmapped) ++j;
      runs.push_back(Run{&r, i, j});
      i = j;
    }
  }
  return runs;
}

}  // namespace

Json MemoryVizRecorder::Frames(uint32_t list) const {
  Json frames = Json::array();
  if (recorded_ == nullptr || list == 0) return frames;
  for (uint32_t id : recorded_->list(list)) {
    const StackFrame& f = recorded_->frame(id);
    frames.push_back({{"filename", f.filename}, {"line", f.line}, {"name", f.name}});
  }
  return frames;
}

Json MemoryVizRecorder::Segments() const {
  const std::vector<RegionSnapshot> regions = TakeMemorySnapshot(allocator_);
  // Final blocks get the frames of the alloc that placed them.
  absl::flat_hash_map<uint64_t, uint32_t> frames_at;
  for (const auto& [id, p] : live_) frames_at[p.addr] = p.context.frames;
  Json segments = Json::array();
  for (const Run& run : MappedRuns(regions)) {
    const RegionSnapshot& r = *run.region;
    Json blocks = Json::array();
    uint64_t allocated = 0, active = 0, requested = 0;
    for (size_t i = run.begin; i < run.end; ++i) {
      const BlockInfo& b = r.blocks[i];
      const bool is_active = IsActive(b.state);
      const uint64_t req = !is_active                        ? 0
                           : b.state == BlockState::kProgram ? b.size.value()
                                                             : b.requested.value();
      if (is_active) active += b.size.value();
      if (b.state != BlockState::kPendingFree && is_active) allocated += b.size.value();
      requested += req;
      const auto f = frames_at.find(b.offset.value());
      blocks.push_back({{"address", b.offset.value()},
                        {"size", b.size.value()},
                        {"requested_size", req},
                        {"state", TorchBlockStateName(b.state)},
                        {"frames", Frames(is_active && f != frames_at.end() ? f->second : 0)}});
    }
    const BlockInfo& first = r.blocks[run.begin];
    const BlockInfo& last = r.blocks[run.end - 1];
    segments.push_back({{"device", device_.value_or(DeviceId(0)).value()},
                        {"address", first.offset.value()},
                        {"total_size", (last.offset + last.size - first.offset).value()},
                        {"allocated_size", allocated},
                        {"active_size", active},
                        {"requested_size", requested},
                        {"stream", r.region.stream.value_or(first.stream)},
                        {"segment_type", r.region.small_pool ? "small" : "large"},
                        {"segment_pool_id", Json::array({0, 0})},
                        {"is_expandable", r.region.expandable || run.begin > 0 || run.end < r.blocks.size()},
                        {"frames", Json::array()},
                        {"blocks", std::move(blocks)}});
  }
  return segments;
}

void MemoryVizRecorder::AddContext(Json& out, const Context& c, bool categories) const {
  out["frames"] = Frames(c.frames);
  if (categories) out["category"] = c.category != 0 ? labels_.string(c.category) : "unknown";
  if (c.user_metadata != 0) out["user_metadata"] = labels_.string(c.user_metadata);
  if (c.compile_context != 0) out["compile_context"] = labels_.string(c.compile_context);
}

Json MemoryVizRecorder::Trace(bool categories) const {
  Json trace = Json::array();
  bool unknown = false;
  for (const Entry& e : trace_) {
    Json entry = {{"action", ActionName(static_cast<int>(e.action))}};
    entry[e.action == Action::kOom ? "device_free" : "addr"] = e.addr;
    entry["size"] = e.size;
    entry["stream"] = e.stream;
    if (e.time_us) entry["time_us"] = *e.time_us;
    AddContext(entry, e.context, categories);
    unknown = unknown || e.context.category == 0;
    trace.push_back(std::move(entry));
  }
  // MemoryViz refuses a legend without `unknown` (docs/memory-viz-rules.md §1):
  // when every entry has its own category, a closing `snapshot` entry, as
  // _snapshot() writes one, carries it.
  if (categories && !unknown) {
    uint64_t active = 0;
    for (const auto& [id, p] : live_) active += p.requested;
    trace.push_back({{"action", "snapshot"},
                     {"addr", 0},
                     {"size", active},
                     {"stream", 0},
                     {"frames", Json::array()},
                     {"category", "unknown"}});
  }
  return trace;
}

absl::Status MemoryVizRecorder::CheckPlacements() const {
  const std::string policy(allocator_.name());
  if (!overlap_.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "--memory-viz: the {} policy's placements are not addresses ({}); the viewer cannot draw them",
        policy, overlap_));
  }
  std::vector<std::pair<uint64_t, uint64_t>> known;  // [begin, end) of final segments and segment entries
  const std::vector<RegionSnapshot> regions = TakeMemorySnapshot(allocator_);
  for (const Run& run : MappedRuns(regions)) {
    const BlockInfo& last = run.region->blocks[run.end - 1];
    known.emplace_back(run.region->blocks[run.begin].offset.value(), (last.offset + last.size).value());
  }
  for (const Entry& e : trace_) {
    if (e.action >= Action::kSegmentAlloc && e.action <= Action::kSegmentUnmap)
      known.emplace_back(e.addr, e.addr + e.size);
  }
  std::sort(known.begin(), known.end());
  // reach[i] = the furthest end among known[0..i]: an address lies in some
  // range iff the ranges starting at or before it reach past it.
  std::vector<uint64_t> reach(known.size());
  for (size_t i = 0; i < known.size(); ++i) reach[i] = std::max(known[i].second, i > 0 ? reach[i - 1] : 0);
  for (const Entry& e : trace_) {
    if (e.action != Action::kAlloc) continue;
    const size_t n =
        std::upper_bound(known.begin(), known.end(), std::make_pair(e.addr, ~uint64_t{0})) - known.begin();
    if (n == 0 || reach[n - 1] <= e.addr) {
      return absl::InvalidArgumentError(fmt::format(
          "--memory-viz: the {} policy's alloc at {:#x} lies in no segment (its address space is not made "
          "of segments); the viewer cannot draw it",
          policy, e.addr));
    }
  }
  return absl::OkStatus();
}

Json MemoryVizRecorder::Snapshot(const Json& settings) const {
  const uint64_t device = device_.value_or(DeviceId(0)).value();
  Json traces = Json::array();
  for (uint64_t d = 0; d < device; ++d) traces.push_back(Json::array());
  traces.push_back(Trace(any_category_));
  Json s = settings;
  s["trace_alloc_max_entries"] = max_entries_;
  s["trace_alloc_overflowed"] = dropped_ > 0;
  Json out = {{"segments", Segments()}, {"device_traces", std::move(traces)}, {"allocator_settings", s}};
  if (recorded_ != nullptr && !recorded_->annotations.empty()) {
    Json annotations = Json::array();
    for (const RangeAnnotation& a : recorded_->annotations) {
      if (a.device != static_cast<int64_t>(device)) continue;
      Json j = {{"stage", a.stage}, {"name", a.name}, {"device", a.device}};
      if (a.time_us) j["time_us"] = *a.time_us;
      annotations.push_back(std::move(j));
    }
    out["external_annotations"] = std::move(annotations);
  }
  return out;
}

namespace {

// Frame lists repeat across entries (one per allocation site): each distinct
// list is written once and then referenced through the memo, as PyTorch does.
class SharedFrames {
 public:
  // True when `v` was written (as a memo reference or as a new shared list).
  bool Write(const Json& v, PickleWriter& w, void (*write)(const Json&, PickleWriter&, SharedFrames&));

 private:
  absl::flat_hash_map<std::string, uint32_t> memo_;
};

void Write(const Json& v, PickleWriter& w, SharedFrames& frames, bool as_tuple = false);

void WriteValue(const Json& v, PickleWriter& w, SharedFrames& frames) { Write(v, w, frames); }

bool SharedFrames::Write(const Json& v, PickleWriter& w,
                         void (*write)(const Json&, PickleWriter&, SharedFrames&)) {
  if (!v.is_array() || v.empty()) return false;
  std::string key = JsonText(v);
  if (const auto it = memo_.find(key); it != memo_.end()) {
    w.Get(it->second);
    return true;
  }
  w.BeginList();
  for (const Json& x : v) write(x, w, *this);
  memo_.emplace(std::move(key), w.EndListShared());
  return true;
}

void Write(const Json& v, PickleWriter& w, SharedFrames& frames, bool as_tuple) {
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
        Write(v[0], w, frames);
        Write(v[1], w, frames);
        return w.EndTuple2();
      }
      w.BeginList();
      for (const Json& x : v) Write(x, w, frames);
      return w.EndList();
    case Json::value_t::object:
      w.BeginDict();
      for (const auto& [k, x] : v.items()) {
        w.String(k);
        if (k == "frames" && frames.Write(x, w, WriteValue)) continue;
        Write(x, w, frames, k == "segment_pool_id");
      }
      return w.EndDict();
    default:
      return w.None();
  }
}

}  // namespace

std::string SnapshotPickle(const Json& snapshot) {
  PickleWriter w;
  SharedFrames frames;
  Write(snapshot, w, frames);
  return w.Finish();
}

}  // namespace hbmsim::sim::viz
