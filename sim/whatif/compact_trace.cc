#include "sim/whatif/compact_trace.h"

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "sim/engine/open_trace.h"

namespace hbmsim {
namespace {

// Gives each live id a dense slot and recycles the slot when the id dies.
class SlotMap {
 public:
  uint32_t Open(uint64_t id) {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = size_++;
    }
    live_[id] = slot;
    return slot;
  }
  const uint32_t* Find(uint64_t id) const {
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : &it->second;
  }
  void Close(uint64_t id) {
    auto it = live_.find(id);
    free_.push_back(it->second);
    live_.erase(it);
  }
  uint32_t size() const { return size_; }

 private:
  absl::flat_hash_map<uint64_t, uint32_t> live_;
  std::vector<uint32_t> free_;
  uint32_t size_ = 0;
};

class Loader {
 public:
  Loader(CompactTrace& out, const EventReader& reader) : out_(out), reader_(reader) {}

  absl::Status Add(const Event& e, uint64_t index) {
    if (e.kind == EventKind::kMark) {
      ++out_.events_dropped;
      return absl::OkStatus();
    }
    PackedEvent p;
    p.kind = e.kind;
    p.id = e.id;
    p.bytes = e.bytes.value();
    p.index = index;
    p.stream = static_cast<uint32_t>(e.stream.value());
    SlotMap& slots = IsProgramEvent(e.kind) ? programs_ : buffers_;
    const bool opens = e.kind == EventKind::kAlloc || e.kind == EventKind::kProgramLoad;
    if (opens) {
      if (slots.Find(e.id) != nullptr) return Bad(e, "that is still live");
      p.slot = slots.Open(e.id);
      if (e.shape) p.shape = Intern(*e.shape);
      requested_[{IsProgramEvent(e.kind), e.id}] = e.bytes;
      live_ += e.bytes;
      if (live_ > out_.peak_live_bytes) {
        out_.peak_live_bytes = live_;
        out_.peak_live_position = out_.events.size();
      }
    } else {
      const uint32_t* slot = slots.Find(e.id);
      if (slot == nullptr) return Bad(e, "that is not live");
      p.slot = *slot;
      const bool closes = e.kind == EventKind::kFree || e.kind == EventKind::kFreeCompleted ||
                          e.kind == EventKind::kProgramUnload;
      if (closes) {
        auto it = requested_.find({IsProgramEvent(e.kind), e.id});
        live_ = live_.SaturatingSub(it->second);
        requested_.erase(it);
        slots.Close(e.id);
      }
    }
    out_.events.push_back(p);
    return absl::OkStatus();
  }

  void Finish() {
    out_.buffer_slots = buffers_.size();
    out_.program_slots = programs_.size();
    out_.events.shrink_to_fit();
  }

 private:
  absl::Status Bad(const Event& e, std::string_view why) const {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} of id {} {}", reader_.Location(), EventKindName(e.kind), e.id, why));
  }
  uint32_t Intern(const TensorShape& shape) {
    auto [it, added] =
        shape_index_.try_emplace(FormatShape(shape), static_cast<uint32_t>(out_.shapes.size()));
    if (added) out_.shapes.push_back(shape);
    return it->second;
  }

  CompactTrace& out_;
  const EventReader& reader_;
  SlotMap buffers_, programs_;
  absl::flat_hash_map<std::pair<bool, uint64_t>, Bytes> requested_;
  absl::flat_hash_map<std::string, uint32_t> shape_index_;
  Bytes live_;
};

}  // namespace

absl::StatusOr<CompactTrace> LoadCompactTrace(const std::string& path, std::optional<DeviceId> device) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(path);
  if (!reader.ok()) return reader.status();
  CompactTrace out;
  out.path = path;
  if (const std::string* b = (*reader)->metadata().Find("device_bytes")) out.device_bytes = *b;
  Loader loader(out, **reader);
  Event e;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const uint64_t index = out.events_read++;
    if (!device) device = e.device;
    if (e.device != *device) {
      ++out.events_dropped;
      continue;
    }
    if (absl::Status s = loader.Add(e, index); !s.ok()) return s;
  }
  // An empty download is not a trace that fits in 0 bytes.
  if (out.events_read == 0) return absl::InvalidArgumentError(fmt::format("no events in {}", path));
  out.device = device.value_or(DeviceId(0));
  loader.Finish();
  return out;
}

std::vector<BufferInterval> CompactBufferIntervals(const CompactTrace& trace) {
  std::vector<BufferInterval> out;
  // Open intervals by (program?, slot): slots are dense, so plain vectors do.
  std::vector<size_t> open_buffers(trace.buffer_slots), open_programs(trace.program_slots);
  constexpr size_t kNone = ~size_t{0};
  std::fill(open_buffers.begin(), open_buffers.end(), kNone);
  std::fill(open_programs.begin(), open_programs.end(), kNone);
  for (const PackedEvent& p : trace.events) {
    std::vector<size_t>& open = IsProgramEvent(p.kind) ? open_programs : open_buffers;
    if (p.kind == EventKind::kAlloc || p.kind == EventKind::kProgramLoad) {
      if (p.bytes == 0) continue;
      open[p.slot] = out.size();
      out.push_back({p.index, p.bytes, p.index, UINT64_MAX});
    } else if (p.kind == EventKind::kFree || p.kind == EventKind::kFreeCompleted ||
               p.kind == EventKind::kProgramUnload) {
      if (open[p.slot] != kNone) out[open[p.slot]].end = p.index;
      open[p.slot] = kNone;
    }
  }
  return out;
}

}  // namespace hbmsim
