#include "sim/scenario/recorded_figures.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::sim {
namespace {

// The free pool and its largest block, from the memory map. The pool is the
// free blocks' sum: BFC's pool − bytes in use, and on a TPU also without the
// programs' reservation (the runtime's free bytes leave it out too).
class FreeScan : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state != BlockState::kFree) return;
    free_pool += b.size.value();
    largest = std::max(largest, b.size.value());
  }
  uint64_t free_pool = 0;
  uint64_t largest = 0;
};

// TF's TraceMeEncode prints a double as absl::StrCat does: 6 significant digits.
std::string SixDigits(double v) { return v == 0 ? "0" : fmt::format("{:.6g}", v); }

std::string Hex(std::optional<uint64_t> v) { return v ? fmt::format("{:#x}", *v) : "failed"; }

}  // namespace

std::string_view FigureMeasureName(FigureMeasure m) {
  switch (m) {
    case FigureMeasure::kAddress:
      return "address";
    case FigureMeasure::kChunkSize:
      return "chunk_size";
    case FigureMeasure::kBytesInUse:
      return "bytes_in_use";
    case FigureMeasure::kFragmentation:
      return "fragmentation";
    case FigureMeasure::kPeak:
      return "peak_bytes_in_use";
  }
  return "?";
}

double FreePoolFragmentation(const Allocator& a) {
  FreeScan scan;
  a.WalkMemoryMap(scan);
  const int64_t free_pool = static_cast<int64_t>(scan.free_pool);
  if (free_pool <= 0) return 0;
  return static_cast<double>(free_pool - static_cast<int64_t>(scan.largest)) / static_cast<double>(free_pool);
}

void FiguresCheck::Placed(uint64_t id, const AllocResult& r) {
  if (r.ok()) chunk_of_[id] = r.size.value();
}

bool FiguresCheck::any() const {
  return std::any_of(counts_.begin(), counts_.end(), [](const FigureCount& c) { return c.total > 0; });
}

void FiguresCheck::AfterAlloc(uint64_t event, const RecordedFigures& f, const AllocResult& r,
                              const Allocator& policy) {
  const std::optional<uint64_t> offset =
      r.ok() && r.has_offset ? std::optional<uint64_t>(r.offset.value()) : std::nullopt;
  if (f.addr) Count(FigureMeasure::kAddress, offset == f.addr, event, f, Hex(f.addr), Hex(offset));
  if (f.chunk_bytes) {
    const bool ok = r.ok() && static_cast<int64_t>(r.size.value()) == *f.chunk_bytes;
    Count(FigureMeasure::kChunkSize, ok, event, f, std::to_string(*f.chunk_bytes),
          r.ok() ? std::to_string(r.size.value()) : "failed");
  }
  CheckState(event, f, policy);
}

void FiguresCheck::AfterRelease(uint64_t event, uint64_t id, const RecordedFigures& f,
                                const Allocator& policy) {
  std::optional<uint64_t> chunk;
  if (auto it = chunk_of_.find(id); it != chunk_of_.end()) {
    chunk = it->second;
    chunk_of_.erase(it);
  }
  if (f.chunk_bytes) {
    const bool ok = chunk && static_cast<int64_t>(*chunk) == *f.chunk_bytes;
    Count(FigureMeasure::kChunkSize, ok, event, f, std::to_string(*f.chunk_bytes),
          chunk ? std::to_string(*chunk) : "not placed");
  }
  CheckState(event, f, policy);
}

void FiguresCheck::CheckState(uint64_t event, const RecordedFigures& f, const Allocator& policy) {
  const int64_t in_use = policy.GetStats().bytes_in_use;
  if (f.bytes_in_use) {
    Count(FigureMeasure::kBytesInUse, in_use == *f.bytes_in_use, event, f, std::to_string(*f.bytes_in_use),
          std::to_string(in_use));
  }
  if (f.fragmentation) {
    const std::string want = SixDigits(*f.fragmentation), got = SixDigits(FreePoolFragmentation(policy));
    Count(FigureMeasure::kFragmentation, want == got, event, f, want, got);
  }
  peak_ = std::max(peak_, in_use);
  if (f.peak_bytes_in_use) {
    Count(FigureMeasure::kPeak, peak_ == *f.peak_bytes_in_use, event, f, std::to_string(*f.peak_bytes_in_use),
          std::to_string(peak_));
  }
}

void FiguresCheck::Count(FigureMeasure m, bool ok, uint64_t event, const RecordedFigures& f,
                         std::string recorded, std::string simulated) {
  FigureCount& c = counts_[static_cast<int>(m)];
  ++c.total;
  if (ok) {
    ++c.matched;
  } else if (!c.first_mismatch) {
    c.first_mismatch =
        fmt::format("event {} ({}): recorded {}, simulated {}", event, f.where, recorded, simulated);
  }
}

}  // namespace hbmsim::sim
