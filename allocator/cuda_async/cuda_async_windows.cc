// Limit windows for `size` (model in the header): the limit is P granules,
// and the window holds the limits under which every comparison with P so far
// came out the same.
#include "allocator/core/dcheck.h"
#include "allocator/cuda_async/cuda_async_allocator.h"

namespace hbmsim::allocator {

bool CudaAsyncAllocator::TrackLimitWindow() {
  if (options_.preallocate) return false;  // P granules mapped from the start: the state is the limit's
  HBMSIM_DCHECK(ranges_.empty() && stats_.num_allocs == 0, "TrackLimitWindow after the first event");
  windows_ = true;
  window_ = LimitWindows{};
  return true;
}

// P >= k iff min(limit, cap) >= k·granule: iff limit >= k·granule while that
// is within the cap; beyond it P < k under every limit.
void CudaAsyncAllocator::NarrowTo(bool at_least, uint64_t k) {
  const bool within_cap = k <= kMaxPhysicalBytes / options_.granule;
  if (at_least) {
    HBMSIM_DCHECK(within_cap, "P >= k past the cap");
    window_.AtLeast(Bytes(k * options_.granule));
  } else if (within_cap) {
    window_.AtMost(Bytes(k * options_.granule).SaturatingSub(Bytes(1)));
  }
}

void CudaAsyncAllocator::OnlyThisP() {
  if (!windows_) return;
  NarrowTo(true, physical_granules_);
  NarrowTo(false, physical_granules_ + 1);
}

std::unique_ptr<Allocator> CudaAsyncAllocator::CloneAt(Bytes limit) const {
  return std::unique_ptr<Allocator>(new CudaAsyncAllocator(*this, limit));
}

// Every member is copied but the free index (BFC's bins, which do not copy):
// it is filed afresh from the ranges' free blocks, in the same (size,
// address) order, and each block points at its range in the copy. What the
// limit sets is recomputed: P, and the limit in the stats.
CudaAsyncAllocator::CudaAsyncAllocator(const CudaAsyncAllocator& from, Bytes limit)
    : options_(from.options_),
      physical_granules_(std::min(limit.value(), kMaxPhysicalBytes) / from.options_.granule),
      release_keep_(from.release_keep_),
      device_(from.device_),
      ranges_(from.ranges_),
      blocks_(from.blocks_),
      spare_blocks_(from.spare_blocks_),
      queued_index_(from.queued_index_),
      handles_(from.handles_),
      next_handle_(from.next_handle_),
      mapped_(from.mapped_),
      held_granules_(from.held_granules_),
      held_bytes_(from.held_bytes_),
      unmapped_since_drop_(from.unmapped_since_drop_),
      stats_(from.stats_),
      peak_granules_mapped_(from.peak_granules_mapped_),
      granules_remapped_(from.granules_remapped_),
      granules_released_(from.granules_released_),
      ranges_released_(from.ranges_released_),
      same_stream_reuses_(from.same_stream_reuses_),
      internal_dependency_reuses_(from.internal_dependency_reuses_),
      ranges_reserved_(from.ranges_reserved_),
      windows_(from.windows_),
      window_(from.window_) {
  HBMSIM_DCHECK(window_.Contains(limit), "CloneAt a limit outside the window");
  options_.memory_limit = limit;
  stats_.bytes_limit = static_cast<int64_t>(std::min<uint64_t>(limit.value(), INT64_MAX));
  for (Block& b : blocks_) b.range = nullptr;  // spare records point nowhere
  for (auto& [base, range] : ranges_) {
    for (uint32_t id = range.first; id != kNone; id = blocks_[id].next) {
      Block& b = blocks_[id];
      b.range = &range;
      if (b.kind == Kind::kFree) FileFree(id, b.address, b.size);
    }
  }
}

}  // namespace hbmsim::allocator
