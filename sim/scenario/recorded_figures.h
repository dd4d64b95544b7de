// The figures a recording's allocator reported after each event (a TF/JAX
// profile's MemoryAllocation / MemoryDeallocation, RecordedFigures) against
// the simulated policy right after the same event. Part of RecordingChecker:
// it is handed each alloc and release of a recorded event.
//
// Measures, each counted over the events whose record carries the figure
// (start-state events are not records and never count):
//   address            simulated offset == recorded addr        (allocations)
//   chunk_size         simulated block size == the recorded chunk size
//                      (allocations, and deallocations: the chunk freed)
//   bytes_in_use       stats.bytes_in_use == the recorded bytes in use
//   fragmentation      (free pool − largest free block) / free pool, free pool
//                      = Σ free blocks (BFC: Σ regions − bytes in use; a TPU's
//                      programs are not free either), printed with 6
//                      significant digits as TF's TraceMe does, == the
//                      recorded reading (0 when nothing is free)
//   peak_bytes_in_use  max(the recorded peak when the recording began, every
//                      simulated bytes in use since) == the recorded peak
// The first mismatch of each measure is kept with its event and record.
#ifndef HBMSIM_SIM_SCENARIO_RECORDED_FIGURES_H_
#define HBMSIM_SIM_SCENARIO_RECORDED_FIGURES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "allocator/core/allocator.h"
#include "sim/layer.h"
#include "trace/core/recorded.h"

namespace hbmsim::sim {

enum class FigureMeasure : uint8_t { kAddress, kChunkSize, kBytesInUse, kFragmentation, kPeak };
inline constexpr int kNumFigureMeasures = 5;
// "address", "chunk_size", "bytes_in_use", "fragmentation", "peak_bytes_in_use"
std::string_view FigureMeasureName(FigureMeasure m);

struct FigureCount {
  uint64_t matched = 0;
  uint64_t total = 0;
  // "event 12 (MemoryAllocation planes[1] ... events[3]): recorded 256, simulated 512"
  std::optional<std::string> first_mismatch;
};

// Fragmentation as a TF/JAX profile records it (1 − largest free block /
// free pool bytes), from any policy's memory map and stats.
double FreePoolFragmentation(const Allocator& a);

class FiguresCheck {
 public:
  // `peak_before`: the recorded peak when the recording began (0 if unknown).
  explicit FiguresCheck(int64_t peak_before) : peak_(peak_before) {}

  // Every alloc (records or not): the simulated block size, for its free.
  void Placed(uint64_t id, const AllocResult& r);
  // After the policy handled the event behind `f`.
  void AfterAlloc(uint64_t event, const RecordedFigures& f, const AllocResult& r, const Allocator& policy);
  void AfterRelease(uint64_t event, uint64_t id, const RecordedFigures& f, const Allocator& policy);
  // Forgets a released buffer that carried no figures.
  void Released(uint64_t id) { chunk_of_.erase(id); }

  bool any() const;
  const FigureCount& count(FigureMeasure m) const { return counts_[static_cast<int>(m)]; }

 private:
  void CheckState(uint64_t event, const RecordedFigures& f, const Allocator& policy);
  void Count(FigureMeasure m, bool ok, uint64_t event, const RecordedFigures& f, std::string recorded,
             std::string simulated);

  absl::flat_hash_map<uint64_t, uint64_t> chunk_of_;  // buffer id -> simulated block size (placed only)
  std::array<FigureCount, kNumFigureMeasures> counts_;
  int64_t peak_ = 0;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_RECORDED_FIGURES_H_
