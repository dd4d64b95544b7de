// The malloc flow (§1.5–§1.8) and free (§1.9) of DeviceCachingAllocator.
#include "allocator/torch/torch_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <utility>

namespace hbmsim::allocator::torch {

TorchAllocator::TorchAllocator(TorchOptions options) : options_(std::move(options)) {
  stats_.max_split_size = options_.max_split_size.value() == kUnlimited
                              ? -1
                              : static_cast<int64_t>(options_.max_split_size.value());
  window_.Only(options_.capacity);
}

AllocResult TorchAllocator::Allocate(const AllocRequest& req) {
  if (req.bytes.is_zero()) {
    // PyTorch hands out a null pointer and records nothing for 0 bytes.
    AllocResult r;
    r.handle = kNullHandle;
    return r;
  }
  Params p;
  p.stream = req.stream;
  p.requested = req.bytes;
  p.rounded = RoundSize(req.bytes, options_);
  p.small = IsSmallSize(p.rounded);
  p.alloc_size = AllocationSize(p.rounded, options_);
  p.recorded = req.recorded_address;
  // Rounding saturated: the true size is 2^64 or more, past any capacity.
  if (p.alloc_size == Bytes::Max()) return Fail(p);
  std::optional<BlockIndex> found = GetFreeBlock(p);
  if (!found) found = MissLadder(p);
  if (!found) return Fail(p);
  return AllocFoundBlock(p, *found, req);
}

// get_free_block: lower_bound on (stream, size, 0); only that first candidate
// is judged by the oversize rules.
std::optional<TorchAllocator::BlockIndex> TorchAllocator::GetFreeBlock(const Params& p) {
  Pool& pool = PoolOf(p.small);
  if (GcEnabled()) ++pool.get_free_blocks_call_count;
  const uint64_t stream = p.stream.value();
  if (pool.blocks.expandable_entries() == 0) [[likely]] {
    // No candidate is walked past: take the first, and put it back (its GC
    // age stamp untouched) if the oversize rules refuse it.
    const std::optional<PoolEntry> e = pool.blocks.TakeBestFit(stream, p.rounded);
    if (!e) return std::nullopt;
    if (!OversizeAllows(p, Bytes(e->size))) {
      pool.blocks.Insert(stream, e->size, e->ptr, static_cast<BlockIndex>(e->handle), false);
      return std::nullopt;
    }
    return static_cast<BlockIndex>(e->handle);
  }
  const std::optional<PoolEntry> e = ExpandableAwareCandidate(p);
  if (!e || !OversizeAllows(p, Bytes(e->size))) return std::nullopt;
  const BlockIndex b = static_cast<BlockIndex>(e->handle);
  pool.blocks.Remove(stream, e->size, e->ptr, blocks_[b].expandable);
  return b;
}

// The oversize rules (max_split_size, max_non_split_rounding) on the candidate.
bool TorchAllocator::OversizeAllows(const Params& p, Bytes size) const {
  if (p.rounded < options_.max_split_size && size >= options_.max_split_size) return false;
  return !(p.rounded >= options_.max_split_size && size >= p.rounded + options_.max_non_split_rounding);
}

// get_free_block's candidate when the pool holds expandable blocks: with
// expandable segments on, walk on while the next block could grow to less
// (its unmapped successor included); with them off, walk past expandable ones.
std::optional<PoolEntry> TorchAllocator::ExpandableAwareCandidate(const Params& p) {
  const FreePool& pool = PoolOf(p.small).blocks;
  const uint64_t stream = p.stream.value();
  const auto next = [&](const PoolEntry& e) { return pool.LowerBound(stream, e.size, e.ptr + 1); };
  std::optional<PoolEntry> it = pool.LowerBound(stream, p.rounded.value(), 0);
  if (!it || !blocks_[it->handle].expandable) return it;
  if (options_.expandable_segments) {
    for (auto n = next(*it); blocks_[it->handle].expandable && n &&
                             GrowsLess(static_cast<BlockIndex>(n->handle), static_cast<BlockIndex>(it->handle));
         n = next(*n)) {
      it = n;
    }
  } else {
    do {
      it = next(*it);
    } while (it && blocks_[it->handle].expandable);
  }
  return it;
}

std::optional<TorchAllocator::BlockIndex> TorchAllocator::MissLadder(const Params& p) {
  if (GcEnabled()) GarbageCollectCachedBlocks();
  if (auto b = AllocBlock(p, /*is_retry=*/false)) return b;
  if (ReleaseAvailableCachedBlocks(p)) {
    if (auto b = AllocBlock(p, /*is_retry=*/false)) return b;
  }
  const Bytes reserved_before(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  ReleaseCachedBlocks();
  const Bytes reserved_after(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  Notify({PolicyEventKind::kCacheFlush, reserved_before - reserved_after, Offset(), 0});
  if (options_.fixed_retry_search) {
    // PR 191302: blocks the flush returned to the pool are searched first. The
    // retry is counted either way.
    if (auto b = GetFreeBlock(p)) {
      ++stats_.num_alloc_retries;
      return b;
    }
  }
  return AllocBlock(p, /*is_retry=*/true);
}

// alloc_block: the fraction check, then expandable mapping or cudaMalloc.
std::optional<TorchAllocator::BlockIndex> TorchAllocator::AllocBlock(const Params& p, bool is_retry) {
  if (is_retry) ++stats_.num_alloc_retries;
  const Bytes reserved(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  // `size > cap - reserved` rather than `reserved + size > cap`: the sum saturates
  // near 2^64 and would let an 8 EiB segment through under a 16 EiB limit.
  if (options_.per_process_memory_fraction && p.alloc_size > Limit().SaturatingSub(reserved)) {
    return std::nullopt;
  }
  if (options_.expandable_segments) return TryAllocateExpandable(p);
  if (windows_ && p.recorded) window_.Only(options_.capacity);
  if (!CapacityHolds(reserved, p.alloc_size)) return std::nullopt;  // cudaMalloc fails
  // A recorded segment inside the assumed unmapped tail of an expandable range
  // (expandable segments were switched off later) proves that range ends there.
  if (p.recorded && !RangeIsFree(*p.recorded, p.alloc_size)) TrimUnmappedTailAt(*p.recorded);
  const Offset base = NewSegmentBase(p.alloc_size, p.recorded);
  Block blk;
  blk.addr = base;
  blk.size = p.alloc_size;
  blk.stream = p.stream;
  blk.segment = base;
  blk.small = p.small;
  const BlockIndex b = NewBlock(blk);
  segments_[base.value()] = Segment{base, p.alloc_size, p.stream, p.small, false, b};
  const int64_t size = static_cast<int64_t>(p.alloc_size.value());
  stats_.segment.Increase(p.small, 1);
  stats_.reserved_bytes.Increase(p.small, size);
  if (p.alloc_size >= options_.max_split_size) stats_.oversize_segments.Increase(1);
  ++stats_.num_device_alloc;
  Notify({PolicyEventKind::kRegionAdded, p.alloc_size, base, kDetailSegment});
  return b;
}

bool TorchAllocator::ShouldSplit(const Block& b, Bytes size) const {
  const Bytes remaining = b.size - size;
  if (b.small || options_.expandable_segments) return remaining.value() >= kMinBlockSize;
  return size < options_.max_split_size && remaining.value() > kSmallSize;
}

// alloc_found_block: the request takes the front; the rest returns to the pool.
AllocResult TorchAllocator::AllocFoundBlock(const Params& p, BlockIndex b, const AllocRequest& req) {
  const bool already_split = IsSplit(b);
  const bool small = blocks_[b].small;
  const bool expandable = blocks_[b].expandable;
  if (ShouldSplit(blocks_[b], p.rounded)) {
    Block rest = blocks_[b];
    rest.addr = blocks_[b].addr + p.rounded;
    rest.size = blocks_[b].size - p.rounded;
    rest.prev = b;
    const BlockIndex r = NewBlock(rest);  // may reallocate blocks_
    if (blocks_[r].next != kNil) blocks_[blocks_[r].next].prev = r;
    blocks_[b].next = r;
    blocks_[b].size = p.rounded;
    InsertIntoPool(r);
    if (!expandable) {
      if (already_split) {
        stats_.inactive_split_bytes.Decrease(small, static_cast<int64_t>(p.rounded.value()));
      } else {
        stats_.inactive_split_bytes.Increase(small, static_cast<int64_t>(blocks_[r].size.value()));
        stats_.inactive_split.Increase(small, 1);
      }
    }
  } else if (already_split && !expandable) {
    stats_.inactive_split_bytes.Decrease(small, static_cast<int64_t>(blocks_[b].size.value()));
    stats_.inactive_split.Decrease(small, 1);
  }
  Block& blk = blocks_[b];
  blk.kind = Kind::kAllocated;
  blk.requested = req.bytes;
  blk.id = req.id;
  blk.handle = next_handle_++;
  live_.Insert(blk.handle, b);
  const int64_t size = static_cast<int64_t>(blk.size.value());
  stats_.allocation.Increase(small, 1);
  stats_.allocated_bytes.Increase(small, size);
  stats_.active.Increase(small, 1);
  stats_.active_bytes.Increase(small, size);
  stats_.requested_bytes.Increase(small, static_cast<int64_t>(req.bytes.value()));
  if (blk.size >= options_.max_split_size) stats_.oversize_allocations.Increase(1);
  ++num_allocs_;
  largest_alloc_size_ = std::max(largest_alloc_size_, size);
  AllocResult r;
  r.handle = Handle(blk.handle);
  r.has_offset = true;
  r.offset = blk.addr;
  r.size = blk.size;
  r.rounded = p.rounded;
  return r;
}

AllocResult TorchAllocator::Fail(const Params& p) {
  ++stats_.num_ooms;
  const Bytes reserved(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  OomNumbers n;
  n.alloc_size = p.alloc_size;
  n.rounded = p.rounded;
  n.device = options_.device_index;
  n.total = options_.capacity;
  n.free = options_.capacity.SaturatingSub(reserved);
  if (options_.per_process_memory_fraction) n.allowed = Limit();
  n.allocated = Bytes(static_cast<uint64_t>(stats_.allocated_bytes.all().current));
  n.reserved = reserved;
  last_oom_ = n;
  AllocResult r;
  r.rounded = p.rounded;
  r.free_bytes = Limit().SaturatingSub(Bytes(static_cast<uint64_t>(stats_.active_bytes.all().current)));
  r.largest_free_block = LargestSatisfiableRequest();
  r.status = p.alloc_size == Bytes::Max() ? AllocStatus::kOom : ClassifyFailure(p.rounded, r.free_bytes);
  return r;
}

// free(): allocated stats drop now; the block stays active until free_block.
void TorchAllocator::MarkFreeRequested(BlockIndex b) {
  Block& blk = blocks_[b];
  blk.kind = Kind::kPendingFree;
  stats_.allocation.Decrease(blk.small, 1);
  stats_.allocated_bytes.Decrease(blk.small, static_cast<int64_t>(blk.size.value()));
  if (blk.size >= options_.max_split_size) stats_.oversize_allocations.Decrease(1);
}

void TorchAllocator::Free(Handle h) {
  const BlockIndex* found = live_.Find(h.value());
  if (found == nullptr) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle the torch policy never issued");
    return;
  }
  const BlockIndex b = *found;
  // Only a pending free is in pending_: an allocated block skips the search.
  if (blocks_[b].kind == Kind::kAllocated) {
    MarkFreeRequested(b);
  } else {
    pending_.erase(h.value());
  }
  FreeBlock(b);
}

void TorchAllocator::RequestFree(Handle h) {
  const BlockIndex* found = live_.Find(h.value());
  if (found == nullptr || blocks_[*found].kind != Kind::kAllocated) return;
  const BlockIndex b = *found;
  MarkFreeRequested(b);
  pending_[h.value()] = b;
}

// A pending free the flush already completed is no longer live: a no-op.
void TorchAllocator::CompleteFree(Handle h) {
  if (!live_.contains(h.value())) return;  // not the caller's bug, unlike Free of an unknown handle
  Free(h);
}

// free_block: merge with free neighbours of the same mapped state, pool it.
void TorchAllocator::FreeBlock(BlockIndex b) {
  live_.Erase(blocks_[b].handle);
  const Bytes original_size = blocks_[b].size;
  const Bytes requested = blocks_[b].requested;
  blocks_[b].kind = Kind::kFree;
  blocks_[b].handle = kNoHandle;
  blocks_[b].requested = Bytes();
  int64_t net_blocks = 0;
  int64_t net_bytes = 0;
  for (const BlockIndex candidate : {blocks_[b].prev, blocks_[b].next}) {
    const Bytes subsumed = TryMerge(b, candidate);
    if (!subsumed.is_zero()) {
      net_blocks -= 1;
      net_bytes -= static_cast<int64_t>(subsumed.value());
    }
  }
  InsertIntoPool(b);
  if (IsSplit(b)) {
    net_blocks += 1;
    net_bytes += static_cast<int64_t>(blocks_[b].size.value());
  }
  const Block& blk = blocks_[b];
  if (!blk.expandable) {
    if (net_blocks > 0) stats_.inactive_split.Increase(blk.small, net_blocks);
    if (net_blocks < 0) stats_.inactive_split.Decrease(blk.small, -net_blocks);
    if (net_bytes > 0) stats_.inactive_split_bytes.Increase(blk.small, net_bytes);
    if (net_bytes < 0) stats_.inactive_split_bytes.Decrease(blk.small, -net_bytes);
  }
  stats_.active.Decrease(blk.small, 1);
  stats_.active_bytes.Decrease(blk.small, static_cast<int64_t>(original_size.value()));
  stats_.requested_bytes.Decrease(blk.small, static_cast<int64_t>(requested.value()));
}

// try_merge_blocks: src must be free (or unmapped) exactly as dst is mapped.
Bytes TorchAllocator::TryMerge(BlockIndex dst, BlockIndex src) {
  if (src == kNil) return Bytes();
  const Kind want = blocks_[dst].kind == Kind::kUnmapped ? Kind::kUnmapped : Kind::kFree;
  if (blocks_[src].kind != want) return Bytes();
  if (want == Kind::kUnmapped) {
    EraseUnmapped(src);
  } else {
    EraseFromPool(src);
  }
  Block& d = blocks_[dst];
  const Block& s = blocks_[src];
  if (d.prev == src) {
    d.addr = s.addr;
    d.prev = s.prev;
    if (d.prev != kNil) {
      blocks_[d.prev].next = dst;
    } else {  // src began its segment's chain: only then is the segment looked up
      Segment& seg = segments_.at(d.segment.value());
      if (seg.head == src) seg.head = dst;
    }
  } else {
    d.next = s.next;
    if (d.next != kNil) blocks_[d.next].prev = dst;
  }
  const Bytes subsumed = s.size;
  d.size += subsumed;
  DeleteBlock(src);
  return subsumed;
}

void TorchAllocator::EmptyCache() { ReleaseCachedBlocks(); }

}  // namespace hbmsim::allocator::torch
