// The physical side of the `cuda_async` pool: which granules of its virtual
// ranges have physical memory mapped behind them.
//
//   VA  |g0      |g1      |g2      |g3      |g4      |
//       [========mapped===][unmapped][==mapped=]
//   runs_ = { g0 -> g2, g3 -> g4 }   (byte addresses, granule aligned)
//
// Invariants (Check):
//   runs are granule aligned, non-empty, disjoint and never adjacent;
//   count() · granule == Σ (end - start) over the runs.
#ifndef HBMSIM_ALLOCATOR_CUDA_ASYNC_MAPPED_GRANULES_H_
#define HBMSIM_ALLOCATOR_CUDA_ASYNC_MAPPED_GRANULES_H_

#include <bit>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace hbmsim::allocator::cuda_async {

class MappedGranules {
 public:
  explicit MappedGranules(uint64_t granule)
      : granule_(granule), shift_(std::has_single_bit(granule) ? std::countr_zero(granule) : -1) {}

  uint64_t granule() const { return granule_; }
  // A power-of-two granule (the default 2 MiB) shifts and masks: a division
  // by a run-time divisor costs tens of cycles, and every placement does several.
  uint64_t Floor(uint64_t address) const {
    return shift_ >= 0 ? address & ~(granule_ - 1) : address - address % granule_;
  }
  // The granule number of an address (or a granule count of a byte count).
  uint64_t Number(uint64_t address) const { return shift_ >= 0 ? address >> shift_ : address / granule_; }
  uint64_t Ceil(uint64_t address) const { return Floor(address + granule_ - 1); }
  // The granules that [begin, end) touches, as a granule-aligned range.
  uint64_t GranulesTouching(uint64_t begin, uint64_t end) const {
    return end <= begin ? 0 : Number(Ceil(end) - Floor(begin));
  }

  // Granules mapped inside the granule-aligned range [begin, end).
  uint64_t MappedIn(uint64_t begin, uint64_t end) const;
  // The unmapped runs of the granule-aligned range [begin, end), in address
  // order: what Map(begin, end) would map.
  std::vector<std::pair<uint64_t, uint64_t>> Holes(uint64_t begin, uint64_t end) const;
  // Maps / unmaps every granule of the granule-aligned range [begin, end).
  void Map(uint64_t begin, uint64_t end);
  void Unmap(uint64_t begin, uint64_t end);

  uint64_t count() const { return count_; }
  const std::map<uint64_t, uint64_t>& runs() const { return runs_; }
  absl::Status Check() const;

 private:
  uint64_t granule_;
  int shift_;  // log2(granule) for a power of two, else -1
  std::map<uint64_t, uint64_t> runs_;  // start -> end
  uint64_t count_ = 0;
};

}  // namespace hbmsim::allocator::cuda_async

#endif  // HBMSIM_ALLOCATOR_CUDA_ASYNC_MAPPED_GRANULES_H_
