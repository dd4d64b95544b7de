#include "trace/xplane/profile_trace.h"

#include <algorithm>
#include <limits>

#include "absl/container/btree_map.h"
#include "fmt/format.h"
#include "trace/xla/xla_trace.h"

namespace hbmsim::trace::xplane {
namespace {

// Device 0 is the busiest GPU allocator; the rest keep the name order.
void OrderDevices(std::vector<AllocatorRecording>& a) {
  size_t best = a.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (IsHostAllocator(a[i].name)) continue;
    if (best == a.size() || a[i].records.size() > a[best].records.size()) best = i;
  }
  if (best != a.size())
    std::rotate(a.begin(), a.begin() + static_cast<ptrdiff_t>(best),
                a.begin() + static_cast<ptrdiff_t>(best) + 1);
}

// TF's dtype names as hbmsim's shape= spells them; nullopt: no shape.
std::optional<std::string_view> ShapeDType(std::string_view tf) {
  static constexpr std::pair<std::string_view, std::string_view> kMap[] = {
      {"float", "f32"},         {"double", "f64"},    {"half", "f16"},        {"bfloat16", "bf16"},
      {"int8", "s8"},           {"int16", "s16"},     {"int32", "s32"},       {"int64", "s64"},
      {"uint8", "u8"},          {"uint16", "u16"},    {"uint32", "u32"},      {"uint64", "u64"},
      {"bool", "pred"},         {"complex64", "c64"}, {"complex128", "c128"}, {"float8_e4m3fn", "f8e4m3fn"},
      {"float8_e5m2", "f8e5m2"}};
  for (const auto& [from, to] : kMap) {
    if (tf == from) return to;
  }
  return std::nullopt;
}

std::optional<TensorShape> ShapeOf(const MemoryRecord& r) {
  const std::optional<std::string_view> dtype = ShapeDType(r.data_type);
  if (!dtype || !r.shape.starts_with("[")) return std::nullopt;
  absl::StatusOr<TensorShape> s = ParseShape(fmt::format("{}{}", *dtype, r.shape));
  if (!s.ok()) return std::nullopt;
  return *s;
}

class Builder {
 public:
  explicit Builder(ProfileTrace& t) : t_(t) {}

  void StartState(uint32_t d) {
    const xplane::StartState& start = t_.devices[d].start;
    std::vector<uint64_t> to_free;
    if (start.top_down) {
      PlaceTopDown(d, start, to_free);
    } else if (!start.grown) {
      // One region of the whole limit, opened by the first chunk's addr=.
      std::optional<uint64_t> end;
      if (!start.chunks.empty() && start.limit) {
        end = start.chunks.front().addr + static_cast<uint64_t>(*start.limit / 256 * 256);
      }
      PlaceChunks(d, start.chunks, end, /*first_addr=*/true, to_free);
    } else {
      // Each region: a filler of its whole size opens it (BFC's next Extend,
      // sizes in doubling order; at its base when it has one), then its chunks.
      for (const StartRegion& r : start.regions) {
        const uint64_t filler = Alloc(d, r.size, r.base, kStartRegionTag);
        Push(Free(d, filler, std::nullopt), {});
        std::vector<StartChunk> chunks;
        if (r.base) {
          for (const StartChunk& c : start.chunks) {
            if (c.addr >= *r.base && c.addr < *r.base + static_cast<uint64_t>(r.size)) chunks.push_back(c);
          }
        } else {  // never touched: its live bytes from the bottom, then free
          chunks.push_back({0, r.unknown_live, StartChunkKind::kUnknown, 0});
          if (r.size > r.unknown_live)
            chunks.push_back({0, r.size - r.unknown_live, StartChunkKind::kHole, 0});
        }
        const uint64_t bottom = r.base.value_or(0);
        PlaceChunks(d, chunks, bottom + static_cast<uint64_t>(r.size), /*first_addr=*/false, to_free, bottom);
      }
    }
    for (uint64_t id : to_free) Push(Free(d, id, std::nullopt), {});
  }

  absl::Status Records(int64_t origin_ps) {
    struct Ref {
      int64_t time_ps;
      uint32_t device;
      uint32_t record;
    };
    std::vector<Ref> refs;
    for (uint32_t d = 0; d < t_.devices.size(); ++d) {
      const auto& recs = t_.devices[d].recording.records;
      t_.devices[d].buffer_of_record.assign(recs.size(), 0);
      for (uint32_t i = 0; i < recs.size(); ++i) refs.push_back({recs[i].time_ps, d, i});
    }
    std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
      return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.device < b.device;
    });
    std::vector<std::optional<int64_t>> step(t_.devices.size());
    for (const Ref& ref : refs) {
      ProfileDevice& dev = t_.devices[ref.device];
      const MemoryRecord& r = dev.recording.records[ref.record];
      const ResolvedRecord& rr = dev.start.records[ref.record];
      const uint64_t t_us = static_cast<uint64_t>(r.time_ps - origin_ps) / 1000000;
      const EventOrigin origin{static_cast<int32_t>(ref.device), static_cast<int32_t>(ref.record)};
      if (r.missing == Missing::kBytes) {
        dev.buffer_of_record[ref.record] = MoveUnknownBytes(ref.device, r, t_us, origin);
      } else if (r.allocation) {
        if (r.step && step[ref.device] != r.step) {
          step[ref.device] = r.step;
          OwnedEvent m;
          m.event.kind = EventKind::kMark;
          m.event.device = DeviceId(ref.device);
          m.event.time_us = t_us;
          m.label = fmt::format("step={}", *r.step);
          Push(std::move(m), {});
        }
        OwnedEvent o;
        o.event.kind = EventKind::kAlloc;
        o.event.id = next_id_++;
        o.event.bytes = Bytes(static_cast<uint64_t>(std::max<int64_t>(rr.requested_bytes, 0)));
        o.event.device = DeviceId(ref.device);
        o.event.time_us = t_us;
        if (r.missing == Missing::kNone) o.event.addr = r.addr;  // a lost event's address is inferred
        o.event.shape = ShapeOf(r);
        if (!r.tf_op.empty()) o.tag = xla::TagSafe(r.tf_op);
        if (r.missing != Missing::kNone) o.tag = std::string(kLostEventTag);
        live_[{ref.device, *r.addr}] = o.event.id;
        dev.buffer_of_record[ref.record] = o.event.id;
        Push(std::move(o), origin);
      } else {
        auto it = live_.find({ref.device, *r.addr});
        if (it == live_.end()) {  // InferStartState has vetted every free: an internal slip
          return absl::InternalError(
              fmt::format("{}: {}: no live chunk at {:#x}", t_.source, r.where, *r.addr));
        }
        dev.buffer_of_record[ref.record] = it->second;
        Push(Free(ref.device, it->second, t_us), origin);
        live_.erase(it);
      }
    }
    return absl::OkStatus();
  }

 private:
  uint64_t Alloc(uint32_t d, int64_t size, std::optional<uint64_t> addr, std::string_view tag,
                 std::optional<uint64_t> t_us = std::nullopt, EventOrigin origin = {}) {
    OwnedEvent o;
    o.event.kind = EventKind::kAlloc;
    o.event.id = next_id_++;
    o.event.bytes = Bytes(static_cast<uint64_t>(size));
    o.event.device = DeviceId(d);
    o.event.time_us = t_us;
    o.event.addr = addr;
    o.tag = std::string(tag);
    Push(std::move(o), origin);
    return next_id_ - 1;
  }

  // Lays the chunks out from the limit down, highest first: a best fit that
  // takes the top end of its block (a TPU's) then tiles them where they were.
  // The programs (bytes_reserved) are loaded first, at the bottom.
  void PlaceTopDown(uint32_t d, const xplane::StartState& start, std::vector<uint64_t>& to_free) {
    if (start.reserved_before && *start.reserved_before > 0) {
      OwnedEvent o;
      o.event.kind = EventKind::kProgramLoad;
      o.event.id = next_id_++;
      o.event.bytes = Bytes(static_cast<uint64_t>(*start.reserved_before));
      o.event.device = DeviceId(d);
      o.tag = "programs";
      Push(std::move(o), {});
    }
    uint64_t at = static_cast<uint64_t>(*start.limit);
    for (auto it = start.chunks.rbegin(); it != start.chunks.rend(); ++it) {
      const StartChunk& c = *it;
      const uint64_t end = c.addr + static_cast<uint64_t>(c.size);
      if (end > at || c.size <= 0) continue;  // overlapping records: noted by the layout
      if (end < at) to_free.push_back(Alloc(d, static_cast<int64_t>(at - end), std::nullopt, kStartFreeTag));
      switch (c.kind) {
        case StartChunkKind::kKnown:
          live_[{d, c.addr}] = Alloc(d, c.size, c.addr, kPreexistingTag);
          break;
        case StartChunkKind::kUnknown:
          unknown_[d].push_back({Alloc(d, c.size, std::nullopt, kUnknownTag), c.size});
          break;
        case StartChunkKind::kHole:
          to_free.push_back(Alloc(d, c.size, std::nullopt, kStartFreeTag));
          break;
      }
      at = c.addr;
    }
  }

  // Bytes in use moved by events the sampled profile lost, at unknown
  // addresses: an allocation of that size, or frees of unknown chunks (latest
  // first) with any surplus allocated back. Returns the buffer allocated, or 0.
  uint64_t MoveUnknownBytes(uint32_t d, const MemoryRecord& r, uint64_t t_us, EventOrigin origin) {
    const int64_t bytes = r.allocation_bytes.value_or(0);
    std::vector<std::pair<uint64_t, int64_t>>& pool = unknown_[d];
    if (r.allocation) {
      pool.push_back({Alloc(d, bytes, std::nullopt, kLostEventTag, t_us, origin), bytes});
      return pool.back().first;
    }
    int64_t left = bytes;
    while (left > 0 && !pool.empty()) {
      Push(Free(d, pool.back().first, t_us), origin);
      left -= pool.back().second;
      pool.pop_back();
    }
    if (left > 0) t_.devices[d].unknown_unreleased += left;
    if (left >= 0) return 0;
    pool.push_back({Alloc(d, -left, std::nullopt, kLostEventTag, t_us, origin), -left});
    return pool.back().first;
  }

  // Allocates `chunks` (tiling upward from the first) from the low end of
  // the free chunk that runs to `end`. BFC hands out a whole free chunk when
  // it is less than twice the request and the rest is under 128 MiB (its
  // split rule), so such a chunk is taken in pieces that each split; a chunk
  // freed later in the recording (known) is then made whole again: its pieces
  // freed (they merge, nothing else being free) and allocated again at once.
  void PlaceChunks(uint32_t d, const std::vector<StartChunk>& chunks, std::optional<uint64_t> end,
                   bool first_addr, std::vector<uint64_t>& to_free,
                   std::optional<uint64_t> at_override = std::nullopt) {
    constexpr int64_t kSplitAnyway = int64_t{128} << 20;
    uint64_t at = at_override.value_or(chunks.empty() ? 0 : chunks.front().addr);
    std::vector<std::pair<const StartChunk*, std::vector<uint64_t>>> remake;
    for (const StartChunk& c : chunks) {
      const bool known = c.kind == StartChunkKind::kKnown;
      std::vector<uint64_t> pieces;
      for (int64_t left = c.size; left > 0;) {
        // Unknown end, or a chunk that runs past it (contradictory records): no split to arrange.
        const bool bounded = end && at<*end&& static_cast<int64_t>(*end - at)> left;
        const int64_t free = bounded ? static_cast<int64_t>(*end - at) : left;
        int64_t piece = left;
        if (!(free == left || free / 2 >= left || free - left >= kSplitAnyway)) {
          piece = std::min(left, std::max<int64_t>(256, free / 2 / 256 * 256));
        }
        const bool whole = piece == c.size;
        const bool with_addr = first_addr || (known && whole);
        const uint64_t id = Alloc(d, piece, with_addr ? std::optional<uint64_t>(at) : std::nullopt,
                                  known && whole                       ? kPreexistingTag
                                  : known                              ? kStartPieceTag
                                  : c.kind == StartChunkKind::kUnknown ? kUnknownTag
                                                                       : kStartFreeTag);
        first_addr = false;
        pieces.push_back(id);
        if (c.kind == StartChunkKind::kHole) to_free.push_back(id);
        if (c.kind == StartChunkKind::kUnknown) unknown_[d].push_back({id, piece});
        at += static_cast<uint64_t>(piece);
        left -= piece;
      }
      if (known && pieces.size() == 1) live_[{d, c.addr}] = pieces[0];
      if (known && pieces.size() > 1) remake.emplace_back(&c, std::move(pieces));
    }
    for (auto& [c, pieces] : remake) {
      for (uint64_t id : pieces) Push(Free(d, id, std::nullopt), {});
      live_[{d, c->addr}] = Alloc(d, c->size, c->addr, kPreexistingTag);
    }
  }

  static OwnedEvent Free(uint32_t d, uint64_t id, std::optional<uint64_t> t_us) {
    OwnedEvent o;
    o.event.kind = EventKind::kFree;
    o.event.id = id;
    o.event.device = DeviceId(d);
    o.event.time_us = t_us;
    return o;
  }

  void Push(OwnedEvent o, EventOrigin origin) {
    if (origin.device >= 0 && origin.record >= 0 && origin.record == 0) {
      t_.devices[origin.device].first_record_event = t_.events.size();
    }
    t_.events.push_back(std::move(o));
    t_.origins.push_back(origin);
  }

  ProfileTrace& t_;
  uint64_t next_id_ = 1;
  absl::btree_map<std::pair<uint32_t, uint64_t>, uint64_t> live_;  // (device, address) -> buffer id
  // Per device, the live chunks of unknown address (id, bytes), oldest first.
  absl::btree_map<uint32_t, std::vector<std::pair<uint64_t, int64_t>>> unknown_;
};

void WriteMetadata(ProfileTrace& t) {
  auto& m = t.metadata.entries;
  m.emplace_back("source", fmt::format("{} ({})", t.source, t.form));
  if (t.framework != Framework::kUnknown) m.emplace_back("framework", FrameworkName(t.framework));
  if (t.start_events > 0) m.emplace_back("start_events", std::to_string(t.start_events));
  if (!t.devices.empty() && t.devices[0].start.limit) {
    m.emplace_back("device_bytes", std::to_string(*t.devices[0].start.limit));
  }
  for (size_t d = 0; d < t.devices.size(); ++d) {
    const ProfileDevice& dev = t.devices[d];
    const StartState& s = dev.start;
    m.emplace_back(fmt::format("xplane_device_{}", d),
                   fmt::format("{} records={} allocations={} deallocations={} in_use_before={} "
                               "preexisting_unknown={} region_base={:#x}",
                               dev.recording.name, dev.recording.allocations + dev.recording.deallocations,
                               dev.recording.allocations, dev.recording.deallocations, s.bytes_in_use_before,
                               s.unknown_bytes, s.base()));
    if (s.limit) m.emplace_back(fmt::format("device_bytes_{}", d), std::to_string(*s.limit));
    for (const std::string& note : s.notes) m.emplace_back(fmt::format("xplane_start_{}", d), note);
  }
}

}  // namespace

bool IsHostAllocator(std::string_view name) { return name.find("host") != std::string_view::npos; }

std::optional<uint32_t> ProfileTrace::DeviceNamed(std::string_view name) const {
  for (uint32_t d = 0; d < devices.size(); ++d) {
    if (devices[d].recording.name == name) return d;
  }
  return std::nullopt;
}

absl::StatusOr<ProfileTrace> BuildProfileTrace(Profile profile) {
  ProfileTrace t;
  t.source = profile.source;
  t.form = profile.form;
  t.framework = profile.framework;
  OrderDevices(profile.allocators);
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (AllocatorRecording& a : profile.allocators) {
    // XProf's converter samples what it writes; an XSpace holds every event.
    MissingEvents missing;
    if (t.form == "memory_profile_json") missing = ReconcileSampled(a);
    absl::StatusOr<StartState> s = InferStartState(a, t.source);
    if (!s.ok()) return s.status();
    if (missing.any()) s->notes.push_back(missing.Note());
    if (!a.records.empty()) origin = std::min(origin, a.records.front().time_ps);
    t.devices.push_back({std::move(a), *std::move(s), std::move(missing), 0, {}, 0});
  }
  Builder b(t);
  for (uint32_t d = 0; d < t.devices.size(); ++d) b.StartState(d);
  t.start_events = t.events.size();
  if (absl::Status s = b.Records(origin); !s.ok()) return s;
  for (ProfileDevice& dev : t.devices) {
    if (dev.unknown_unreleased == 0) continue;
    dev.start.notes.push_back(fmt::format(
        "{} B freed at unknown addresses found no unknown chunk left to free: bytes in use reads that much "
        "higher from then on",
        dev.unknown_unreleased));
  }
  WriteMetadata(t);
  return t;
}

}  // namespace hbmsim::trace::xplane
