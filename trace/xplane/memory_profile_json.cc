#include "trace/xplane/memory_profile_json.h"

#include <zlib.h>

#include <fstream>
#include <iterator>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "trace/core/gunzip.h"

namespace hbmsim::trace::xplane {
namespace {

using Json = nlohmann::json;

bool IsGzip(std::string_view b) { return b.size() >= 2 && b[0] == '\x1f' && b[1] == '\x8b'; }

// proto3 JSON writes int64 as a string, some writers as a number.
std::optional<int64_t> IntField(const Json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(it->get<uint64_t>());
  if (!it->is_string()) return std::nullopt;
  const std::string& s = it->get_ref<const std::string&>();
  int64_t v = 0;
  size_t used = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> AddressField(const Json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return static_cast<uint64_t>(it->get<int64_t>());
  if (!it->is_string()) return std::nullopt;
  const std::string& s = it->get_ref<const std::string&>();
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != s.size() || s.starts_with("-")) return std::nullopt;
  return v;
}

std::string StringField(const Json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

absl::Status SnapshotError(std::string_view source, const std::string& where, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source, where, what));
}

absl::StatusOr<AllocatorRecording> ReadAllocator(const std::string& name, const Json& body,
                                                 std::string_view source) {
  AllocatorRecording rec;
  rec.name = name;
  // Newer XProf keeps the sampled timeline apart and rewrites memoryProfileSnapshots to the
  // records of the allocations live at the peak: the timeline is the trace then (sampled.h).
  const char* list = "memoryProfileSnapshots";
  if (auto t = body.find("sampledTimelineSnapshots"); t != body.end() && t->is_array() && !t->empty())
    list = "sampledTimelineSnapshots";
  auto snaps = body.find(list);
  if (snaps == body.end()) return rec;
  if (!snaps->is_array()) {
    return SnapshotError(source, fmt::format("memoryProfilePerAllocator.{}.{}", name, list), "not an array");
  }
  for (size_t i = 0; i < snaps->size(); ++i) {
    const Json& s = (*snaps)[i];
    const std::string where = fmt::format("memoryProfilePerAllocator.{}.{}[{}]", name, list, i);
    static const Json kEmpty = Json::object();
    const Json& stats = s.is_object() && s.contains("aggregationStats") && s["aggregationStats"].is_object()
                            ? s["aggregationStats"]
                            : kEmpty;
    const Json& act = s.is_object() && s.contains("activityMetadata") && s["activityMetadata"].is_object()
                          ? s["activityMetadata"]
                          : kEmpty;
    const std::string activity = StringField(act, "memoryActivity");
    if (activity != "ALLOCATION" && activity != "DEALLOCATION") {
      return SnapshotError(
          source, where,
          fmt::format("activityMetadata.memoryActivity is \"{}\", not ALLOCATION or DEALLOCATION", activity));
    }
    MemoryRecord r;
    r.allocation = activity == "ALLOCATION";
    r.time_ps = IntField(s, "timeOffsetPs").value_or(0);
    if (!TimeInRange(r.time_ps)) {
      return SnapshotError(source, where,
                           fmt::format("timeOffsetPs {} is out of range (at most ±2^61 ps)", r.time_ps));
    }
    r.addr = AddressField(act, "address");
    r.requested_bytes = IntField(act, "requestedBytes");
    r.allocation_bytes = IntField(act, "allocationBytes");
    // XProf prints every field, so a deallocation the runtime sent without a
    // size (a TPU's) reads 0 bytes: no chunk is empty, so that is "not recorded".
    if (!r.allocation && r.allocation_bytes == 0) r.allocation_bytes.reset();
    if (!r.allocation && r.requested_bytes == 0) r.requested_bytes.reset();
    r.bytes_allocated = IntField(stats, "heapAllocatedBytes");
    r.bytes_available = IntField(stats, "freeMemoryBytes");
    r.bytes_reserved = IntField(stats, "stackReservedBytes");
    r.peak_bytes_in_use = IntField(stats, "peakBytesInUse");
    if (auto f = stats.find("fragmentation"); f != stats.end() && f->is_number())
      r.fragmentation = f->get<double>();
    r.tf_op = StringField(act, "tfOpName");
    r.step = IntField(act, "stepId");
    r.region_type = StringField(act, "regionType");
    r.data_type = StringField(act, "dataType");
    r.shape = StringField(act, "tensorShape");
    r.where = where;
    rec.records.push_back(std::move(r));
  }
  return rec;
}

}  // namespace

absl::StatusOr<Profile> ParseMemoryProfile(std::string_view bytes, std::string_view source) {
  std::string inflated;
  std::string_view text = bytes;
  if (IsGzip(bytes)) {
    absl::StatusOr<std::string> g = GunzipBounded(bytes, kMaxMemoryProfileJsonBytes, source);
    if (!g.ok()) return g.status();
    inflated = *std::move(g);
    text = inflated;
  }
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // nlohmann counts the bytes read, so the offending byte's 0-based offset is one less.
    return absl::InvalidArgumentError(fmt::format("{}: byte offset {}{}: not valid JSON", source,
                                                  e.byte > 0 ? e.byte - 1 : 0,
                                                  IsGzip(bytes) ? " of the decompressed text" : ""));
  } catch (const Json::out_of_range& e) {
    // A number beyond a double ("1e9999"): nlohmann quotes it but keeps no offset; find the literal.
    const std::string_view what = e.what();
    const size_t open = what.find('\''), close = what.rfind('\'');
    const std::string_view literal =
        open < close ? what.substr(open + 1, close - open - 1) : std::string_view();
    const size_t at = literal.empty() ? std::string_view::npos : text.find(literal);
    return absl::InvalidArgumentError(fmt::format("{}: byte offset {}{}: a number too large for a double",
                                                  source, at == std::string_view::npos ? 0 : at,
                                                  IsGzip(bytes) ? " of the decompressed text" : ""));
  }
  auto per = j.is_object() ? j.find("memoryProfilePerAllocator") : j.end();
  if (!j.is_object() || per == j.end() || !per->is_object()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: byte offset 0: no memoryProfilePerAllocator object: not an XProf memory profile", source));
  }
  Profile p;
  p.source = std::string(source);
  p.form = "memory_profile_json";
  for (const auto& [name, body] : per->items()) {
    absl::StatusOr<AllocatorRecording> rec = ReadAllocator(name, body, source);
    if (!rec.ok()) return rec.status();
    if (rec->records.empty()) continue;
    if (name.starts_with("xla_")) p.framework = Framework::kJax;
    if (p.framework == Framework::kUnknown && (name == "gpu_host_bfc" || name == "cuda_host_bfc"))
      p.framework = Framework::kTensorFlow;
    p.allocators.push_back(*std::move(rec));
  }
  FinishProfile(p);
  if (p.allocators.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: byte offset 0: a memory profile with no allocation or deallocation", source));
  }
  return p;
}

absl::StatusOr<Profile> ReadMemoryProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot open {}", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InvalidArgumentError(fmt::format("{}: read error", path));
  return ParseMemoryProfile(bytes, path);
}

bool LooksLikeMemoryProfileJson(std::string_view head) {
  std::string text(head);
  if (IsGzip(head)) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return false;
    char buf[512];
    z.next_in = reinterpret_cast<Bytef*>(text.data());
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    inflate(&z, Z_SYNC_FLUSH);
    text.assign(buf, sizeof(buf) - z.avail_out);
    inflateEnd(&z);
  }
  const size_t brace = text.find_first_not_of(" \t\r\n");
  if (brace == std::string::npos || text[brace] != '{') return false;
  return text.find("\"memoryProfilePerAllocator\"") != std::string::npos;
}

}  // namespace hbmsim::trace::xplane
