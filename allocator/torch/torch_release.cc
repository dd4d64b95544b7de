// Giving memory back to the device (§1.8 steps 4.1, 4.4, 4.5) and choosing
// where new segments start.
#include <algorithm>
#include <vector>

#include "allocator/torch/torch_allocator.h"

namespace hbmsim::allocator::torch {

// release_block: cudaFree of a whole, free, non-expandable segment.
void TorchAllocator::ReleaseBlock(BlockIndex b) {
  const Block blk = blocks_[b];
  ++stats_.num_device_free;
  Notify({PolicyEventKind::kRegionReleased, blk.size, blk.addr, kDetailSegment});
  stats_.segment.Decrease(blk.small, 1);
  stats_.reserved_bytes.Decrease(blk.small, static_cast<int64_t>(blk.size.value()));
  if (blk.size >= options_.max_split_size) stats_.oversize_segments.Decrease(1);
  EraseFromPool(b);
  segments_.erase(blk.segment.value());
  DeleteBlock(b);
}

// Only with max_split_size: free the smallest oversize block >= max(request,
// max_split_size) on this stream, else oversize blocks from the largest down
// until that much is freed.
bool TorchAllocator::ReleaseAvailableCachedBlocks(const Params& p) {
  if (options_.max_split_size.value() == kUnlimited) return false;
  Pool& pool = PoolOf(p.small);
  const Bytes target = std::max(p.rounded, options_.max_split_size);
  // Only after a failed cudaMalloc with max_split_size set: a copy of this
  // stream's entries, in order, stands in for PyTorch's walk over the set.
  const std::vector<PoolEntry> entries = pool.blocks.StreamEntries(p.stream.value());
  auto it = std::lower_bound(entries.begin(), entries.end(), PoolEntry{target.value(), 0, 0});
  if (it != entries.end() && !blocks_[it->handle].expandable) {
    ReleaseBlock(static_cast<BlockIndex>(it->handle));
    return true;
  }
  // Walk down from the largest block below the search key (the walk ends at
  // the stream's first block, where PyTorch's meets another stream or the
  // set's begin), collecting first so erasing does not disturb the walk.
  std::vector<BlockIndex> victims;
  Bytes total;
  for (auto cur = it; cur != entries.begin();) {
    --cur;
    if (total >= target || Bytes(cur->size) < options_.max_split_size) break;
    const BlockIndex b = static_cast<BlockIndex>(cur->handle);
    // An oversize block is never split, so it is a whole segment.
    if (!blocks_[b].expandable && !IsSplit(b)) {
      victims.push_back(b);
      total += Bytes(cur->size);
    }
  }
  for (BlockIndex v : victims) ReleaseBlock(v);
  return total >= target;
}

// release_cached_blocks (empty_cache): complete every pending free, then cudaFree
// every whole free segment (large pool first) and unmap free expandable pages.
void TorchAllocator::ReleaseCachedBlocks() {
  SynchronizeAndFreeEvents();
  ReleaseBlocks(large_);
  ReleaseBlocks(small_);
}

void TorchAllocator::ReleaseBlocks(Pool& pool) {
  std::vector<BlockIndex> to_release;
  std::vector<BlockIndex> to_unmap;
  pool.blocks.ForEach([&](uint64_t, const PoolEntry& e) {
    const BlockIndex b = static_cast<BlockIndex>(e.handle);
    if (blocks_[b].expandable) {
      to_unmap.push_back(b);
    } else if (!IsSplit(b)) {
      to_release.push_back(b);
    }
  });
  for (BlockIndex b : to_release) ReleaseBlock(b);
  for (BlockIndex b : to_unmap) {
    UnmapBlock(b);
    if (blocks_[b].kind == Kind::kUnmapped && !IsSplit(b)) ReleaseExpandableSegment(b);
  }
}

void TorchAllocator::SynchronizeAndFreeEvents() {
  ++stats_.num_sync_all_streams;
  std::map<uint64_t, BlockIndex> pending;
  pending.swap(pending_);
  for (const auto& [handle, b] : pending) FreeBlock(b);
}

// garbage_collect_cached_blocks: while below the reclaim target, release every
// unsplit, non-expandable large-pool block at least as old as the mean age.
void TorchAllocator::GarbageCollectCachedBlocks() {
  const Bytes reserved(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  const uint64_t threshold =
      static_cast<uint64_t>(options_.garbage_collection_threshold * static_cast<double>(Limit().value()));
  if (reserved.value() <= threshold) return;
  const uint64_t target = reserved.value() - threshold;
  double total_age = 0.0;
  int freeable = 0;
  large_.blocks.ForEach([&](uint64_t, const PoolEntry& e) {
    if (!IsSplit(static_cast<BlockIndex>(e.handle))) {
      total_age += static_cast<double>(gc_count(blocks_[e.handle]));
      ++freeable;
    }
  });
  if (freeable == 0) return;
  uint64_t reclaimed = 0;
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    const double age_threshold = total_age / freeable;
    freed = false;
    std::vector<BlockIndex> victims;
    large_.blocks.ForEach([&](uint64_t, const PoolEntry& e) {
      const BlockIndex b = static_cast<BlockIndex>(e.handle);
      const Block& blk = blocks_[b];
      if (!IsSplit(b) && !blk.expandable && static_cast<double>(gc_count(blk)) >= age_threshold) {
        victims.push_back(b);
      }
    });
    for (BlockIndex v : victims) {
      freed = true;
      reclaimed += blocks_[v].size.value();
      total_age -= static_cast<double>(gc_count(blocks_[v]));
      --freeable;
      ReleaseBlock(v);
    }
  }
}

bool TorchAllocator::RangeIsFree(Offset base, Bytes size) const {
  const Offset end = base + size;
  auto it = segments_.lower_bound(end.value());  // first segment starting at or after end
  if (it == segments_.begin()) return true;
  --it;
  return it->second.base + it->second.size <= base;
}

Bytes TorchAllocator::SpaceAfter(Offset base) const {
  auto it = segments_.upper_bound(base.value());
  return it == segments_.end() ? Bytes::Max() : it->second.base - base;
}

// The recorded address when the range is not held, else the device's next range.
Offset TorchAllocator::NewSegmentBase(Bytes size, std::optional<Offset> recorded) {
  if (recorded && RangeIsFree(*recorded, size)) return *recorded;
  Offset base = device_.Reserve(size);
  while (!RangeIsFree(base, size)) base = device_.Reserve(size);
  return base;
}

}  // namespace hbmsim::allocator::torch
