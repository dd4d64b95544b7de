// Free address ranges of one region, kept in address order with eager
// coalescing, plus an optional (size, address) index for best fit. Shared by
// the first_fit, best_fit and paged (virtual address space) baselines.
//
// Invariants (Check verifies them):
//   ranges are disjoint, non-empty and never adjacent (coalescing is eager);
//   the size index, when kept, holds exactly one (size, address) per range.
#ifndef HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_
#define HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"

namespace hbmsim::baselines {

class FreeRanges {
 public:
  explicit FreeRanges(bool index_by_size) : index_by_size_(index_by_size) {}

  // Returns [offset, offset+size) to the free set, merging with neighbours.
  void Release(uint64_t offset, uint64_t size);
  // Takes [offset, offset+size) out of the free range that contains it.
  void Take(uint64_t offset, uint64_t size);

  // The lowest-addressed range of at least `size` bytes (first fit).
  std::optional<uint64_t> FirstFit(uint64_t size) const;
  // The smallest range of at least `size` bytes, lowest address on ties
  // (requires the size index).
  std::optional<uint64_t> BestFit(uint64_t size) const;

  uint64_t Largest() const;
  uint64_t total() const { return total_; }
  const std::map<uint64_t, uint64_t>& by_address() const { return by_address_; }

  absl::Status Check() const;

 private:
  void Insert(uint64_t offset, uint64_t size);
  void Erase(std::map<uint64_t, uint64_t>::iterator it);

  bool index_by_size_;
  std::map<uint64_t, uint64_t> by_address_;          // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> by_size_;  // (size, offset)
  uint64_t total_ = 0;
};

}  // namespace hbmsim::baselines

#endif  // HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_
