// What the baselines whose pool is one fixed range from the start share
// (first_fit/best_fit, ideal, offline): the pool is the limit (or the limit
// rounded to the alignment) and all of it counts as reserved from the first
// event; stats are kept by the policy itself; the reserved bytes split only
// into blocks in use (their rounding) and free ones (GenericCause,
// allocator/core/reserved_parts.h). A placed request is counted and answered
// the same way by each.
#ifndef HBMSIM_ALLOCATOR_BASELINES_FIXED_POOL_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BASELINES_FIXED_POOL_ALLOCATOR_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "allocator/core/allocator.h"
#include "allocator/core/dcheck.h"
#include "allocator/core/reserved_parts.h"

namespace hbmsim::allocator::baselines {

class FixedPoolAllocator : public Allocator {
 public:
  void ClearStats() override { stats_.Clear(); }
  int64_t BytesInUse() const override { return stats_.bytes_in_use; }
  Bytes ReservedBytes() const override { return pool_; }
  // GenericCause over in-use and free blocks only (a queued free stays in use).
  std::span<const std::string_view> ReservedCauses() const override { return kInUseAndFreeCauses; }

 protected:
  explicit FixedPoolAllocator(Bytes pool) : pool_(pool) {
    stats_.bytes_limit = StatBytes(pool);
    stats_.pool_bytes = StatBytes(pool);
    stats_.peak_pool_bytes = StatBytes(pool);
  }

  // A block of `size` bytes taken: counted in the stats.
  void CountPlaced(uint64_t size) {
    stats_.num_allocs++;
    stats_.bytes_in_use += static_cast<int64_t>(size);
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(size));
  }
  // The answer for a block of `size` bytes at `offset`, known by `handle`.
  static void SetPlaced(AllocResult& r, uint64_t handle, uint64_t offset, Bytes size) {
    r.handle = Handle(handle);
    r.has_offset = true;
    r.offset = Offset(offset);
    r.size = size;
  }
  // Forgets the live block `h` names (an entry of `live`, a map from the
  // handle to a block with its `size`) and its bytes in use. kNullHandle (a
  // zero-byte request) names none; any other unknown handle is the caller's
  // bug, which `unknown` says.
  template <typename LiveMap>
  void ForgetLive(LiveMap& live, Handle h, const char* unknown) {
    auto it = live.find(h.value());
    if (it == live.end()) {
      HBMSIM_DCHECK(h == kNullHandle, unknown);
      return;
    }
    stats_.bytes_in_use -= static_cast<int64_t>(it->second.size);
    live.erase(it);
  }
  // The memory map's entry for free space.
  static BlockInfo FreeBlock(uint64_t offset, uint64_t size) {
    return {Offset(offset), Bytes(size), Bytes(0), BlockState::kFree, kNoHandle, kNoHandle, 0, 0};
  }

  AllocatorStats stats_;

 private:
  Bytes pool_;
};

}  // namespace hbmsim::allocator::baselines

#endif  // HBMSIM_ALLOCATOR_BASELINES_FIXED_POOL_ALLOCATOR_H_
