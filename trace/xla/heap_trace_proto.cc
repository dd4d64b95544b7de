#include "trace/xla/heap_trace_proto.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "google/protobuf/stubs/logging.h"
#include "trace/xla/text_pair.h"
#include "trace/xla/wire_check.h"
#include "xla_memory.pb.h"

namespace hbmsim::trace::xla {
namespace {

namespace pb = ::hbmsim::xla_proto;
using EventProto = pb::HeapSimulatorTrace::Event;

absl::Status PathError(std::string_view source, std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source, path, what));
}

// logical buffer id -> size, refusing duplicates and negative values.
absl::StatusOr<absl::flat_hash_map<int64_t, int64_t>> BufferSizes(const pb::BufferAssignmentProto& ba,
                                                                  std::string_view source) {
  absl::flat_hash_map<int64_t, int64_t> sizes;
  for (int i = 0; i < ba.logical_buffers_size(); ++i) {
    const pb::LogicalBufferProto& b = ba.logical_buffers(i);
    const std::string path = fmt::format("logical_buffers[{}]", i);
    if (b.id() < 0 || b.size() < 0) {
      return PathError(source, path, fmt::format("negative id {} or size {}", b.id(), b.size()));
    }
    if (!sizes.emplace(b.id(), b.size()).second) {
      return PathError(source, path, fmt::format("buffer {} listed twice", b.id()));
    }
  }
  return sizes;
}

// XLA's offsets for the buffers of allocation `index` (empty when it is not listed).
absl::flat_hash_map<int64_t, int64_t> AssignedOffsets(const pb::BufferAssignmentProto& ba, int64_t index) {
  absl::flat_hash_map<int64_t, int64_t> offsets;
  for (const pb::BufferAllocationProto& a : ba.buffer_allocations()) {
    if (a.index() != index) continue;
    for (const auto& assigned : a.assigned())
      offsets.emplace(assigned.logical_buffer_id(), assigned.offset());
    break;
  }
  return offsets;
}

// Replays one HeapSimulatorTrace into events, resolving SHARE_WITH groups.
class TraceConverter {
 public:
  TraceConverter(std::string_view source, const absl::flat_hash_map<int64_t, int64_t>& sizes, int trace_index,
                 absl::flat_hash_map<int64_t, int64_t> offsets, std::vector<OwnedEvent>& out)
      : source_(source), sizes_(sizes), trace_(trace_index), offsets_(std::move(offsets)), out_(out) {}

  absl::Status Apply(const EventProto& e, int index, uint64_t time) {
    path_ = fmt::format("heap_simulator_traces[{}].events[{}]", trace_, index);
    time_ = time;
    if (e.buffer_id() < 0) return Error(fmt::format("negative buffer_id {}", e.buffer_id()));
    switch (e.kind()) {
      case EventProto::ALLOC:
        return Alloc(e);
      case EventProto::SHARE_WITH:
        return Share(e);
      case EventProto::FREE:
        return Free(e);
      default:
        return Error(fmt::format("unknown event kind {}", static_cast<int>(e.kind())));
    }
  }

  int shares() const { return shares_; }

 private:
  absl::Status Error(std::string_view what) const { return PathError(source_, path_, what); }

  absl::Status Alloc(const EventProto& e) {
    const int64_t b = e.buffer_id();
    auto size = sizes_.find(b);
    if (size == sizes_.end())
      return Error(fmt::format("ALLOC of buffer {}, which logical_buffers does not list", b));
    if (root_of_.contains(b) || members_.contains(b))
      return Error(fmt::format("ALLOC of buffer {}, which is live", b));
    root_of_[b] = b;
    members_[b] = 1;
    OwnedEvent o;
    o.event.kind = EventKind::kAlloc;
    o.event.id = static_cast<uint64_t>(b);
    o.event.bytes = Bytes(static_cast<uint64_t>(size->second));
    o.event.device = DeviceId(static_cast<uint32_t>(trace_));
    o.event.time_us = time_;
    if (auto off = offsets_.find(b); off != offsets_.end() && off->second >= 0) {
      o.event.addr = static_cast<uint64_t>(off->second);
    }
    o.tag = TagSafe(e.instruction_name());
    out_.push_back(std::move(o));
    return absl::OkStatus();
  }

  absl::Status Share(const EventProto& e) {
    const int64_t b = e.buffer_id(), c = e.share_with_canonical_id();
    if (root_of_.contains(b)) return Error(fmt::format("SHARE_WITH of buffer {}, which is live", b));
    auto canonical = root_of_.find(c);
    if (canonical == root_of_.end()) {
      return Error(fmt::format("buffer {} shares with buffer {}, which is not live", b, c));
    }
    const int64_t root = canonical->second;
    root_of_[b] = root;
    ++members_[root];
    ++shares_;
    return absl::OkStatus();
  }

  absl::Status Free(const EventProto& e) {
    const int64_t b = e.buffer_id();
    auto it = root_of_.find(b);
    if (it == root_of_.end()) return Error(fmt::format("FREE of buffer {}, which is not live", b));
    const int64_t root = it->second;
    root_of_.erase(it);
    if (--members_[root] > 0) return absl::OkStatus();  // a sharer still uses the memory
    members_.erase(root);
    OwnedEvent o;
    o.event.kind = EventKind::kFree;
    o.event.id = static_cast<uint64_t>(root);
    o.event.device = DeviceId(static_cast<uint32_t>(trace_));
    o.event.time_us = time_;
    out_.push_back(std::move(o));
    return absl::OkStatus();
  }

  std::string_view source_;
  const absl::flat_hash_map<int64_t, int64_t>& sizes_;
  int trace_;
  absl::flat_hash_map<int64_t, int64_t> offsets_;
  std::vector<OwnedEvent>& out_;
  absl::flat_hash_map<int64_t, int64_t> root_of_;  // live buffer -> the buffer whose memory it uses
  absl::flat_hash_map<int64_t, int> members_;      // root -> live buffers using its memory
  std::string path_;
  uint64_t time_ = 0;
  int shares_ = 0;
};

// The BufferAssignmentProto in `bytes`: itself, or the buffer_assignment of an HloProto.
absl::StatusOr<pb::BufferAssignmentProto> DecodeAssignment(std::string_view bytes, std::string_view source,
                                                           std::string& kind) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes, more than a protobuf can hold", source, bytes.size()));
  }
  // libprotobuf logs bad UTF-8 to stderr by itself; a library must not print, and the
  // error this function returns is the one line the user sees.
  const google::protobuf::LogSilencer quiet;
  pb::BufferAssignmentProto ba;
  if (ba.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
      ba.heap_simulator_traces_size() > 0) {
    kind = "BufferAssignmentProto";
    return ba;
  }
  pb::HloProto hlo;
  if (hlo.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
      hlo.buffer_assignment().heap_simulator_traces_size() > 0) {
    kind = "HloProto";
    return std::move(*hlo.mutable_buffer_assignment());
  }
  if (std::optional<WireError> e = FindWireError(bytes, pb::BufferAssignmentProto::descriptor())) {
    return absl::InvalidArgumentError(
        fmt::format("{}: byte offset {}: not a valid protobuf: {}", source, e->offset, e->what));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}: no heap_simulator_traces: neither a BufferAssignmentProto with one nor an HloProto "
                  "with a buffer_assignment",
                  source));
}

}  // namespace

absl::StatusOr<XlaTrace> ParseHeapSimulatorProto(std::string_view bytes, std::string_view source) {
  std::string kind;
  absl::StatusOr<pb::BufferAssignmentProto> ba = DecodeAssignment(bytes, source, kind);
  if (!ba.ok()) return ba.status();
  if (ba->heap_simulator_traces_size() == 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: the {}'s buffer assignment has no heap_simulator_traces", source, kind));
  }
  absl::StatusOr<absl::flat_hash_map<int64_t, int64_t>> sizes = BufferSizes(*ba, source);
  if (!sizes.ok()) return sizes.status();
  XlaTrace trace;
  trace.source = std::string(source);
  trace.metadata.entries.emplace_back("source", fmt::format("xla heap-simulator trace ({})", kind));
  trace.metadata.entries.emplace_back("compiled_program", "true");  // no device limit: replay sizes it
  trace.metadata.entries.emplace_back("xla_heap_traces", std::to_string(ba->heap_simulator_traces_size()));
  uint64_t time = 0;
  for (int i = 0; i < ba->heap_simulator_traces_size(); ++i) {
    const pb::HeapSimulatorTrace& t = ba->heap_simulator_traces(i);
    TraceConverter converter(source, *sizes, i, AssignedOffsets(*ba, t.buffer_allocation_index()),
                             trace.events);
    for (int j = 0; j < t.events_size(); ++j) {
      if (absl::Status s = converter.Apply(t.events(j), j, time++); !s.ok()) return s;
    }
    trace.metadata.entries.emplace_back(
        fmt::format("xla_trace_{}", i),
        fmt::format("device {}, buffer_allocation_index {}, {} events, {} shares, whole_module_simulation={}",
                    i, t.buffer_allocation_index(), t.events_size(), converter.shares(),
                    t.whole_module_simulation()));
  }
  return trace;
}

absl::StatusOr<XlaTrace> ReadHeapSimulatorProtoFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseHeapSimulatorProto(*bytes, path);
}

bool LooksLikeXlaProtoFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  auto read_at = [f](uint64_t offset, size_t n) {
    std::string buf(n, '\0');
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) return std::string();
    buf.resize(std::fread(buf.data(), 1, n, f));
    return buf;
  };
  // Text never holds control bytes other than tab and line breaks; a proto's first bytes always do.
  const std::string head = read_at(0, 256);
  const bool binary = std::any_of(head.begin(), head.end(), [](char c) {
    return static_cast<uint8_t>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
  const bool looks = binary && TopLevelLooksLikeLenFields(static_cast<uint64_t>(st.st_size), 64, read_at);
  std::fclose(f);
  return looks;
}

}  // namespace hbmsim::trace::xla
