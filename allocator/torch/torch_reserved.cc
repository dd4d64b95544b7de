// Why PyTorch's caching allocator keeps a free block, in its own terms
// (allocator/core/reserved_parts.h): what torch.cuda.memory_stats() calls
// inactive_split, what empty_cache() would release, what max_split_size
// keeps whole, and the mapped-but-free pages of expandable segments (the
// whole ones empty_cache() would unmap apart from those a live block shares). The key
// names the pool (small blocks are <= 1 MiB, their segments 2 MiB) and,
// when not the default stream's, the stream the pool serves.
#include <string>

#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator::torch {
namespace {

std::string PoolKey(const BlockContext& c) {
  const std::string pool = c.region.small_pool ? "small pool" : "large pool";
  if (c.block.stream == 0) return pool;
  return fmt::format("{}, stream {}", pool, c.block.stream);
}

}  // namespace

// Mapped bytes of an expandable segment nobody uses, split as
// release_cached_blocks() would split them (UnmapBlock, ExpandableSegment::
// unmap): the pages lying wholly inside the block, counted from the segment's
// base, are unmapped (expandable_free); the bytes in a page the block shares
// with a live neighbour (or in the part-page a clipped range ends with) stay
// mapped (expandable_partial_page).
ReservedCause TorchAllocator::ExpandableCause(const BlockContext& c) const {
  const Bytes page = PageSize(c.region.small_pool);
  const Offset base = c.region.base;
  const Offset begin = c.block.offset;
  const Offset end = c.block.offset + c.block.size;
  const Offset whole_begin = base + (begin - base).RoundUp(page.value());
  const Offset whole_end = base + (end - base).RoundDown(page.value());
  if (whole_end <= whole_begin) return {"expandable_partial_page", PoolKey(c)};
  if (whole_begin == begin && whole_end == end) return {"expandable_free", PoolKey(c)};
  return {"expandable_partial_page", PoolKey(c), "expandable_free", whole_begin, whole_end - whole_begin};
}

ReservedCause TorchAllocator::CauseOf(const BlockContext& c) const {
  if (c.block.state != BlockState::kFree) return {GenericCause(c).cause, ""};
  if (c.region.expandable) return ExpandableCause(c);
  // A free block beside live ones: only freeing those returns its segment.
  if (c.region_holds_live) return {"inactive_split", PoolKey(c)};
  // A whole free segment: release_cached_blocks() (empty_cache(), or an OOM's
  // retry) gives it back; at or above max_split_size it was never split and
  // only a request it fits within kLargeBuffer reuses it.
  if (c.block.size >= options_.max_split_size) return {"oversize_segment", PoolKey(c)};
  return {"free_segment", PoolKey(c)};
}

}  // namespace hbmsim::allocator::torch
