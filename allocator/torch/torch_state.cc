// Block storage, pool membership, and the read-only views (stats, memory map).
#include <algorithm>

#include "allocator/torch/torch_allocator.h"

namespace hbmsim::allocator::torch {

TorchAllocator::BlockIndex TorchAllocator::NewBlock(const Block& b) {
  if (!free_slots_.empty()) {
    const BlockIndex i = free_slots_.back();
    free_slots_.pop_back();
    blocks_[i] = b;
    return i;
  }
  blocks_.push_back(b);
  return static_cast<BlockIndex>(blocks_.size() - 1);
}

void TorchAllocator::DeleteBlock(BlockIndex b) {
  blocks_[b] = Block();
  free_slots_.push_back(b);
}

// insert_into_blocks: also stamps the GC age clock.
void TorchAllocator::InsertIntoPool(BlockIndex b) {
  Block& blk = blocks_[b];
  Pool& pool = PoolOf(blk.small);
  blk.gc_count_base = pool.get_free_blocks_call_count;
  pool.blocks.Insert(blk.stream.value(), blk.size.value(), blk.addr.value(), b, blk.expandable);
}

void TorchAllocator::EraseFromPool(BlockIndex b) {
  const Block& blk = blocks_[b];
  PoolOf(blk.small).blocks.Remove(blk.stream.value(), blk.size.value(), blk.addr.value(), blk.expandable);
}

void TorchAllocator::InsertUnmapped(BlockIndex b) {
  const Block& blk = blocks_[b];
  PoolOf(blk.small).unmapped.insert(AddrKey{blk.stream.value(), blk.addr.value(), b});
}

void TorchAllocator::EraseUnmapped(BlockIndex b) {
  const Block& blk = blocks_[b];
  PoolOf(blk.small).unmapped.erase(AddrKey{blk.stream.value(), blk.addr.value(), b});
}

uint64_t TorchAllocator::gc_count(const Block& b) const {
  return PoolOf(b.small).get_free_blocks_call_count - b.gc_count_base;
}

bool TorchAllocator::GcEnabled() const {
  return options_.per_process_memory_fraction && options_.garbage_collection_threshold > 0.0;
}

// min(capacity, allowed_memory_maximum = floor(fraction × capacity)).
Bytes TorchAllocator::Limit() const {
  if (!options_.per_process_memory_fraction) return options_.capacity;
  const double allowed =
      *options_.per_process_memory_fraction * static_cast<double>(options_.capacity.value());
  // A capacity near 2^64 rounds up to 2^64 as a double; casting that back is undefined.
  if (allowed >= 18446744073709551616.0) return options_.capacity;
  return std::min(options_.capacity, Bytes(static_cast<uint64_t>(allowed)));
}

// See the header: the largest request that would succeed now, recovery included.
Bytes TorchAllocator::LargestSatisfiableRequest() const {
  Bytes cached;
  Bytes releasable;
  for (const Pool* pool : {&small_, &large_}) {
    pool->blocks.ForEach([&](uint64_t, const PoolEntry& e) {
      const BlockIndex b = static_cast<BlockIndex>(e.handle);
      const Block& blk = blocks_[b];
      // A small-pool block serves only requests the small pool takes (<= 1 MiB).
      cached = std::max(cached, blk.small ? std::min(blk.size, Bytes(kSmallSize)) : blk.size);
      if (!blk.expandable && !IsSplit(b)) releasable += blk.size;
      if (blk.expandable) {
        const Bytes page = PageSize(blk.small);
        const Bytes begin = (blk.addr - blk.segment).RoundUp(page.value());
        const Bytes end = (blk.addr + blk.size - blk.segment).RoundDown(page.value());
        if (begin < end) releasable += end - begin;
      }
    });
  }
  const Bytes reserved(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  const Bytes headroom = Limit().SaturatingSub(reserved) + releasable;
  Bytes fresh;
  if (options_.expandable_segments) {
    const Bytes page = PageSize(false);
    fresh = headroom.RoundDown(page.value());
    large_.blocks.ForEach([&](uint64_t, const PoolEntry& e) {
      const Block& blk = blocks_[e.handle];
      if (blk.next == kNil || blocks_[blk.next].kind != Kind::kUnmapped) return;
      fresh = std::max(fresh, blk.size + std::min(blocks_[blk.next].size, fresh));
    });
  } else if (headroom.RoundDown(kRoundLarge).value() >= kMinLargeAlloc) {
    fresh = headroom.RoundDown(kRoundLarge);
  } else if (headroom.value() >= kSmallBuffer) {
    fresh = Bytes(kSmallSize);
  }
  return std::max(cached, fresh);
}

AllocatorStats TorchAllocator::GetStats() const {
  AllocatorStats s;
  s.num_allocs = num_allocs_;
  s.bytes_in_use = stats_.active_bytes.all().current;
  s.peak_bytes_in_use = stats_.active_bytes.all().peak;
  s.largest_alloc_size = largest_alloc_size_;
  if (options_.capacity != Bytes::Max()) s.bytes_limit = StatBytes(options_.capacity);
  s.largest_free_block_bytes = StatBytes(LargestSatisfiableRequest());
  s.pool_bytes = stats_.reserved_bytes.all().current;
  s.peak_pool_bytes = stats_.reserved_bytes.all().peak;
  return s;
}

void TorchAllocator::AppendCounters(Counters& out) const { AppendTorchCounters(stats_, out); }

void TorchAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  uint64_t index = 0;
  for (const auto& [base, seg] : segments_) {
    v.OnRegion(RegionInfo{seg.base, seg.size, index++, seg.expandable, seg.small});
    for (BlockIndex b = seg.head; b != kNil; b = blocks_[b].next) {
      const Block& blk = blocks_[b];
      BlockInfo info;
      info.offset = blk.addr;
      info.size = blk.size;
      info.requested = blk.requested;
      info.stream = blk.stream.value();
      switch (blk.kind) {
        case Kind::kFree:
          info.state = BlockState::kFree;
          break;
        case Kind::kAllocated:
          info.state = BlockState::kInUse;
          break;
        case Kind::kPendingFree:
          info.state = BlockState::kPendingFree;
          break;
        case Kind::kUnmapped:
          info.state = BlockState::kUnmapped;
          break;
      }
      if (blk.kind == Kind::kAllocated || blk.kind == Kind::kPendingFree) {
        info.handle = blk.handle;
        info.id = blk.id.value();
      }
      if (blk.next != kNil) info.next_handle = blocks_[blk.next].handle;
      v.OnBlock(info);
    }
  }
}

}  // namespace hbmsim::allocator::torch
