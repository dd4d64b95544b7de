#include "sim/xplane_replay/recorded_checker.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim {
namespace {

// The largest free block and the pool, from the memory map.
class FreeScan : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override { pool += r.size.value(); }
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kFree) largest = std::max(largest, b.size.value());
  }
  uint64_t pool = 0;
  uint64_t largest = 0;
};

// TF's TraceMeEncode prints a double as absl::StrCat does: 6 significant digits.
std::string SixDigits(double v) { return v == 0 ? "0" : fmt::format("{:.6g}", v); }

}  // namespace

std::string_view RecordedMeasureName(RecordedMeasure m) {
  switch (m) {
    case RecordedMeasure::kAddress:
      return "address";
    case RecordedMeasure::kChunkSize:
      return "chunk_size";
    case RecordedMeasure::kBytesInUse:
      return "bytes_in_use";
    case RecordedMeasure::kFragmentation:
      return "fragmentation";
    case RecordedMeasure::kPeak:
      return "peak_bytes_in_use";
  }
  return "?";
}

RecordedChecker::RecordedChecker(Allocator& inner, const xplane::ProfileTrace& trace, uint32_t device)
    : inner_(inner), trace_(trace), device_(device) {
  inner_.set_observer(this);
  for (size_t i = 0; i < trace.origins.size(); ++i) {
    const xplane::EventOrigin& o = trace.origins[i];
    if (o.device == static_cast<int32_t>(device)) event_of_record_[static_cast<uint64_t>(o.record)] = i;
  }
  if (device < trace.devices.size()) {
    const xplane::ProfileDevice& dev = trace.devices[device];
    for (size_t r = 0; r < dev.recording.records.size(); ++r) {
      if (!dev.recording.records[r].allocation)
        free_record_of_buffer_[dev.buffer_of_record[r]] = static_cast<int32_t>(r);
    }
    peak_ = dev.start.peak_before.value_or(0);
  }
}

double RecordedChecker::Fragmentation() const {
  FreeScan scan;
  inner_.WalkMemoryMap(scan);
  const int64_t in_use = inner_.GetStats().bytes_in_use;
  const int64_t free_pool = static_cast<int64_t>(scan.pool) - in_use;
  if (free_pool <= 0) return 0;
  return static_cast<double>(free_pool - static_cast<int64_t>(scan.largest)) / static_cast<double>(free_pool);
}

AllocResult RecordedChecker::Allocate(const AllocRequest& req) {
  const AllocResult r = inner_.Allocate(req);
  if (r.ok() && r.handle != kNullHandle) live_[r.handle.value()] = {req.id.value(), r.size.value()};
  const uint64_t index = req.event.value();
  if (index < trace_.origins.size()) {
    const xplane::EventOrigin& o = trace_.origins[index];
    if (o.device == static_cast<int32_t>(device_) && o.record >= 0) {
      const xplane::MemoryRecord& rec = trace_.devices[device_].recording.records[o.record];
      CheckAfter(rec, index,
                 r.ok() && r.has_offset ? std::optional<uint64_t>(r.offset.value()) : std::nullopt,
                 r.ok() ? std::optional<uint64_t>(r.size.value()) : std::nullopt);
    }
  }
  return r;
}

void RecordedChecker::Free(Handle h) {
  auto it = live_.find(h.value());
  std::optional<std::pair<uint64_t, uint64_t>> freed;
  if (it != live_.end()) {
    freed = it->second;
    live_.erase(it);
  }
  inner_.Free(h);
  if (!freed) return;
  auto rec = free_record_of_buffer_.find(freed->first);
  if (rec == free_record_of_buffer_.end()) return;
  const uint64_t event = event_of_record_[static_cast<uint64_t>(rec->second)];
  CheckAfter(trace_.devices[device_].recording.records[rec->second], event, std::nullopt, freed->second);
}

void RecordedChecker::CheckAfter(const xplane::MemoryRecord& r, uint64_t event,
                                 std::optional<uint64_t> offset, std::optional<uint64_t> chunk) {
  const AllocatorStats s = inner_.GetStats();
  if (r.allocation && r.addr) {
    Count(RecordedMeasure::kAddress, offset == r.addr, event, r, fmt::format("{:#x}", *r.addr),
          offset ? fmt::format("{:#x}", *offset) : "failed");
  }
  if (r.allocation_bytes) {
    Count(RecordedMeasure::kChunkSize, chunk && static_cast<int64_t>(*chunk) == *r.allocation_bytes, event, r,
          std::to_string(*r.allocation_bytes), chunk ? std::to_string(*chunk) : "failed");
  }
  if (r.bytes_allocated) {
    Count(RecordedMeasure::kBytesInUse, s.bytes_in_use == *r.bytes_allocated, event, r,
          std::to_string(*r.bytes_allocated), std::to_string(s.bytes_in_use));
  }
  if (r.fragmentation) {
    const std::string want = SixDigits(*r.fragmentation), got = SixDigits(Fragmentation());
    Count(RecordedMeasure::kFragmentation, want == got, event, r, want, got);
  }
  peak_ = std::max(peak_, s.bytes_in_use);
  if (r.peak_bytes_in_use) {
    Count(RecordedMeasure::kPeak, peak_ == *r.peak_bytes_in_use, event, r,
          std::to_string(*r.peak_bytes_in_use), std::to_string(peak_));
  }
}

void RecordedChecker::Count(RecordedMeasure m, bool ok, uint64_t event, const xplane::MemoryRecord& r,
                            std::string recorded, std::string simulated) {
  MeasureCount& c = counts_[static_cast<int>(m)];
  ++c.total;
  if (ok) {
    ++c.matched;
  } else if (!c.first_mismatch) {
    c.first_mismatch =
        fmt::format("event {} ({} {}): recorded {}, simulated {}", event,
                    r.allocation ? "MemoryAllocation" : "MemoryDeallocation", r.where, recorded, simulated);
  }
}

}  // namespace hbmsim
