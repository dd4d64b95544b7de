#include "trace/xplane/xspace_reader.h"

#include <climits>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>

#include "fmt/format.h"
#include "google/protobuf/stubs/logging.h"
#include "trace/xla/wire_check.h"
#include "xplane.pb.h"

namespace hbmsim::trace::xplane {
namespace {

namespace pb = ::hbmsim::xplane_proto;

// Reads the stats of one event of one plane.
class StatView {
 public:
  StatView(const pb::XPlane& plane, const pb::XEvent& event) : plane_(plane), event_(event) {}

  const pb::XStat* Find(std::string_view name) const {
    for (const pb::XStat& s : event_.stats()) {
      auto m = plane_.stat_metadata().find(s.metadata_id());
      if (m != plane_.stat_metadata().end() && m->second.name() == name) return &s;
    }
    return nullptr;
  }

  // A whole number, from whichever field holds it (a double only when integral).
  std::optional<int64_t> Int(std::string_view name) const {
    const pb::XStat* s = Find(name);
    if (s == nullptr) return std::nullopt;
    switch (s->value_case()) {
      case pb::XStat::kInt64Value:
        return s->int64_value();
      case pb::XStat::kUint64Value:
        if (s->uint64_value() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
        return static_cast<int64_t>(s->uint64_value());
      case pb::XStat::kDoubleValue: {
        const double d = s->double_value();
        if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18) return std::nullopt;
        return static_cast<int64_t>(d);
      }
      default:
        return std::nullopt;
    }
  }

  std::optional<uint64_t> Address(std::string_view name) const {
    const pb::XStat* s = Find(name);
    if (s == nullptr) return std::nullopt;
    if (s->value_case() == pb::XStat::kUint64Value) return s->uint64_value();
    if (s->value_case() == pb::XStat::kInt64Value) return static_cast<uint64_t>(s->int64_value());
    std::optional<int64_t> i = Int(name);
    if (i) return static_cast<uint64_t>(*i);
    return std::nullopt;
  }

  std::optional<double> Double(std::string_view name) const {
    const pb::XStat* s = Find(name);
    if (s == nullptr) return std::nullopt;
    if (s->value_case() == pb::XStat::kDoubleValue) return s->double_value();
    if (s->value_case() == pb::XStat::kInt64Value) return static_cast<double>(s->int64_value());
    if (s->value_case() == pb::XStat::kUint64Value) return static_cast<double>(s->uint64_value());
    return std::nullopt;
  }

  // An inline string, or a reference to a stat_metadata name (newer files).
  std::optional<std::string> String(std::string_view name) const {
    const pb::XStat* s = Find(name);
    if (s == nullptr) return std::nullopt;
    if (s->value_case() == pb::XStat::kStrValue) return s->str_value();
    if (s->value_case() == pb::XStat::kRefValue) {
      auto m = plane_.stat_metadata().find(static_cast<int64_t>(s->ref_value()));
      if (m != plane_.stat_metadata().end()) return m->second.name();
    }
    return std::nullopt;
  }

 private:
  const pb::XPlane& plane_;
  const pb::XEvent& event_;
};

MemoryRecord ToRecord(const StatView& v, bool allocation, int64_t time_ps, std::string where) {
  MemoryRecord r;
  r.allocation = allocation;
  r.time_ps = time_ps;
  r.addr = v.Address("addr");
  r.requested_bytes = v.Int("requested_bytes");
  r.allocation_bytes = v.Int("allocation_bytes");
  r.bytes_allocated = v.Int("bytes_allocated");
  r.bytes_available = v.Int("bytes_available");
  r.bytes_reserved = v.Int("bytes_reserved");
  r.peak_bytes_in_use = v.Int("peak_bytes_in_use");
  r.fragmentation = v.Double("fragmentation");
  r.tf_op = v.String("tf_op").value_or("");
  r.step = v.Int("group_id");
  r.region_type = v.String("region_type").value_or("");
  if (std::optional<int64_t> dt = v.Int("data_type")) {
    r.data_type = DataTypeName(*dt);
  } else {
    r.data_type = v.String("data_type").value_or("");
  }
  r.shape = v.String("shape").value_or("");
  r.where = std::move(where);
  return r;
}

// What the planes and threads say about the framework that wrote the file.
Framework GuessFramework(const pb::XSpace& space) {
  bool tf = false;
  for (const pb::XPlane& p : space.planes()) {
    for (const pb::XLine& l : p.lines()) {
      if (l.name().starts_with("py_xla") || l.name().starts_with("tf_pjrt")) return Framework::kJax;
      if (l.name().starts_with("tf_Compute")) tf = true;
    }
    if (p.name() == "/host:metadata") return Framework::kJax;
  }
  return tf ? Framework::kTensorFlow : Framework::kUnknown;
}

absl::Status ReadPlane(const pb::XPlane& plane, int plane_index, std::string_view source,
                       std::map<std::string, AllocatorRecording>& by_name) {
  for (int li = 0; li < plane.lines_size(); ++li) {
    const pb::XLine& line = plane.lines(li);
    for (int ei = 0; ei < line.events_size(); ++ei) {
      const pb::XEvent& event = line.events(ei);
      auto meta = plane.event_metadata().find(event.metadata_id());
      if (meta == plane.event_metadata().end()) continue;
      const std::string& kind = meta->second.name();
      const bool allocation = kind == "MemoryAllocation";
      if (!allocation && kind != "MemoryDeallocation") continue;
      std::string where = fmt::format("planes[{}] \"{}\" lines[{}] \"{}\" events[{}]", plane_index,
                                      plane.name(), li, line.name(), ei);
      const StatView stats(plane, event);
      std::optional<std::string> name = stats.String("allocator_name");
      if (!name || name->empty()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: {}: {} without allocator_name", source, where, kind));
      }
      int64_t time_ps = 0;  // a crafted file can put either term anywhere in int64
      if (__builtin_mul_overflow(line.timestamp_ns(), int64_t{1000}, &time_ps) ||
          __builtin_add_overflow(time_ps, event.offset_ps(), &time_ps) || !TimeInRange(time_ps)) {
        return absl::InvalidArgumentError(
            fmt::format("{}: {}: time out of range (line timestamp_ns {}, offset_ps {}; at most ±2^61 ps)", source,
                        where, line.timestamp_ns(), event.offset_ps()));
      }
      AllocatorRecording& rec = by_name[*name];
      rec.name = *name;
      rec.records.push_back(ToRecord(stats, allocation, time_ps, std::move(where)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Profile> ParseXSpace(std::string_view bytes, std::string_view source) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes, more than a protobuf can hold", source, bytes.size()));
  }
  const google::protobuf::LogSilencer quiet;  // the returned error is the one line the user sees
  pb::XSpace space;
  if (!space.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    if (std::optional<xla::WireError> e = xla::FindWireError(bytes, pb::XSpace::descriptor())) {
      return absl::InvalidArgumentError(
          fmt::format("{}: byte offset {}: not a valid XSpace protobuf: {}", source, e->offset, e->what));
    }
    return absl::InvalidArgumentError(fmt::format("{}: byte offset 0: not a valid XSpace protobuf", source));
  }
  std::map<std::string, AllocatorRecording> by_name;  // ordered: devices get stable numbers
  for (int i = 0; i < space.planes_size(); ++i) {
    if (absl::Status s = ReadPlane(space.planes(i), i, source, by_name); !s.ok()) return s;
  }
  Profile p;
  p.source = std::string(source);
  p.form = "xplane";
  p.framework = GuessFramework(space);
  for (auto& [name, rec] : by_name) p.allocators.push_back(std::move(rec));
  FinishProfile(p);
  if (p.allocators.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: byte offset 0: an XSpace with no MemoryAllocation or MemoryDeallocation event (was the profile "
        "recorded on a device with a BFC allocator?)",
        source));
  }
  return p;
}

absl::StatusOr<Profile> ReadXSpaceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot open {}", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InvalidArgumentError(fmt::format("{}: read error", path));
  return ParseXSpace(bytes, path);
}

bool LooksLikeXSpace(std::string_view head) {
  std::string_view s = head;
  std::optional<uint64_t> tag = xla::TakeVarint(s);
  if (!tag || *tag != 0x0A) return false;
  if (!xla::TakeVarint(s)) return false;  // the plane's length
  tag = xla::TakeVarint(s);
  if (tag && *tag == 0x08) {  // XPlane.id
    if (!xla::TakeVarint(s)) return false;
    tag = xla::TakeVarint(s);
  }
  if (!tag || *tag != 0x12) return false;  // XPlane.name
  std::optional<uint64_t> len = xla::TakeVarint(s);
  if (!len || *len == 0) return false;
  return s.starts_with("/") || s.starts_with("Task Environment");
}

}  // namespace hbmsim::trace::xplane
