// SeedSegment: the state at the start of a trace, segment by segment.
//
// An expandable seed is one mapped run of a VA range whose extent the snapshot
// does not show (snapshot() reports "one segment for each contiguous mapped range
// of memory"). The range was reserved as ceil(1.125 × device memory / page) pages
// and is mapped from its low end, so the run is given an unmapped tail up to that
// size (clipped at the next range we hold); a later seed of the same stream and
// pool that falls inside that tail is a further run of the same range:
//
//   first seed              hole (unmapped)   second seed        tail (unmapped)
//   ├─────────────────────┼─────────────────┼──────────────────┼─────────────···┤
//   base                                                               base + VA
//
// get_free_block ranks an expandable block by size + its unmapped successor, so
// without the tail a free block at the end of the run loses to smaller free blocks
// elsewhere, which PyTorch does not do (bolong_xl_fwd_cl2048_fp32 event 384).
#include <algorithm>

#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator::torch {
namespace {

bool IsFreeState(BlockState s) { return s == BlockState::kFree; }

}  // namespace

absl::Status TorchAllocator::ValidateSeed(const SegmentSeed& seed) const {
  const auto invalid = [&](std::string_view what) {
    return absl::InvalidArgumentError(fmt::format("seeded segment at {}: {}", seed.base.value(), what));
  };
  if (seed.size.is_zero()) return invalid("empty segment");
  if (seed.blocks.empty()) return invalid("no blocks");
  Bytes total;
  for (size_t i = 0; i < seed.blocks.size(); ++i) {
    const SeedBlock& b = seed.blocks[i];
    if (b.size.is_zero()) return invalid(fmt::format("block {} is empty", i));
    if (i > 0 && IsFreeState(b.state) && IsFreeState(seed.blocks[i - 1].state)) {
      return invalid(
          fmt::format("blocks {} and {} are both free (PyTorch would have merged them)", i - 1, i));
    }
    total += b.size;
  }
  if (total != seed.size) {
    return invalid(
        fmt::format("blocks sum to {} bytes, not the segment's {}", total.value(), seed.size.value()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Handle>> TorchAllocator::SeedSegment(const SegmentSeed& seed) {
  if (absl::Status s = ValidateSeed(seed); !s.ok()) return s;
  const bool small = seed.small_pool.value_or(seed.expandable ? seed.size < options_.large_segment_size
                                                              : seed.size.value() == kSmallBuffer);
  std::vector<Handle> handles;
  if (seed.expandable) {
    if (std::optional<BlockIndex> hole = SeedHole(seed, small)) {
      SeedIntoHole(*hole, seed, small, handles);
      return handles;
    }
  }
  // Inside another range's assumed tail: that range must end here.
  if (!RangeIsFree(seed.base, seed.size)) TrimUnmappedTailAt(seed.base);
  if (!RangeIsFree(seed.base, seed.size)) {
    return absl::InvalidArgumentError(
        fmt::format("seeded segment at {}: overlaps a segment already held", seed.base.value()));
  }
  Segment seg{seed.base, seed.size, seed.stream, small, seed.expandable, kNil};
  if (!seed.expandable) {
    stats_.segment.Increase(small, 1);
    if (seed.size >= options_.max_split_size) stats_.oversize_segments.Increase(1);
  }
  BlockIndex last = kNil;
  seg.head = SeedChain(seed, small, seed.base, kNil, last, handles);
  segments_[seed.base.value()] = seg;
  if (seed.expandable) AddSeededTail(seed.base, last);
  return handles;
}

// The unmapped block of a held range (same stream and pool) that strictly
// contains the seed, i.e. the seed is a later mapped run of that range.
std::optional<TorchAllocator::BlockIndex> TorchAllocator::SeedHole(const SegmentSeed& seed, bool small) {
  const Pool& pool = PoolOf(small);
  auto it = pool.unmapped.upper_bound(AddrKey{seed.stream.value(), seed.base.value(), kNil});
  if (it == pool.unmapped.begin()) return std::nullopt;
  --it;
  if (it->stream != seed.stream.value()) return std::nullopt;
  const Block& hole = blocks_[it->block];
  const Offset end = seed.base + seed.size;
  // The run must not touch a mapped block of the range: PyTorch would have
  // reported the two as one segment.
  const bool fits = hole.addr < seed.base && end <= hole.addr + hole.size;
  const bool touches_next = end == hole.addr + hole.size && hole.next != kNil;
  if (!fits || touches_next) return std::nullopt;
  return it->block;
}

// Splits the hole into [unmapped][the seed's blocks][unmapped, if any left].
void TorchAllocator::SeedIntoHole(BlockIndex hole, const SegmentSeed& seed, bool small,
                                  std::vector<Handle>& handles) {
  EraseUnmapped(hole);
  const Block before = blocks_[hole];
  blocks_[hole].size = seed.base - before.addr;
  InsertUnmapped(hole);
  BlockIndex last = kNil;
  SeedChain(seed, small, before.segment, hole, last, handles);
  const Offset end = seed.base + seed.size;
  const Offset hole_end = before.addr + before.size;
  if (end < hole_end) {
    Block rest = before;
    rest.addr = end;
    rest.size = hole_end - end;
    rest.prev = last;
    const BlockIndex r = NewBlock(rest);
    blocks_[last].next = r;
    if (rest.next != kNil) blocks_[rest.next].prev = r;
    InsertUnmapped(r);
  }
}

// The rest of the seeded run's VA range, unmapped: up to the range size counted
// from the run's base, and never into the next range we hold.
void TorchAllocator::AddSeededTail(Offset base, BlockIndex last) {
  Segment& seg = segments_.at(base.value());
  const Bytes page = PageSize(seg.small);
  const Bytes va = ExpandableRangeSize(seg.small);
  if (va <= seg.size) return;
  const Offset end = base + seg.size;
  const Bytes tail = std::min(va - seg.size, SpaceAfter(end)).RoundDown(page.value());
  if (tail.is_zero()) return;
  Block blk = blocks_[last];
  blk.addr = end;
  blk.size = tail;
  blk.kind = Kind::kUnmapped;
  blk.requested = Bytes();
  blk.handle = kNoHandle;
  blk.id = BufferId();
  blk.prev = last;
  blk.next = kNil;
  const BlockIndex t = NewBlock(blk);
  blocks_[last].next = t;
  InsertUnmapped(t);
  seg.size = seg.size + tail;
}

// Installs the seed's blocks in address order behind `prev`, owned by the
// segment at `owner`; free blocks go into the pool, live ones get handles.
TorchAllocator::BlockIndex TorchAllocator::SeedChain(const SegmentSeed& seed, bool small, Offset owner,
                                                     BlockIndex prev, BlockIndex& last,
                                                     std::vector<Handle>& handles) {
  stats_.reserved_bytes.Increase(small, static_cast<int64_t>(seed.size.value()));
  BlockIndex first = kNil;
  Offset addr = seed.base;
  const bool split = seed.blocks.size() > 1;
  for (const SeedBlock& sb : seed.blocks) {
    Block blk;
    blk.addr = addr;
    blk.size = sb.size;
    blk.stream = seed.stream;
    blk.segment = owner;
    blk.small = small;
    blk.expandable = seed.expandable;
    blk.prev = prev;
    const BlockIndex b = NewBlock(blk);
    if (first == kNil) first = b;
    if (prev != kNil) blocks_[prev].next = b;
    prev = b;
    addr = addr + sb.size;
    if (IsFreeState(sb.state)) {
      if (split && !seed.expandable) {
        stats_.inactive_split.Increase(small, 1);
        stats_.inactive_split_bytes.Increase(small, static_cast<int64_t>(sb.size.value()));
      }
      continue;  // pooled below, once the chain is linked
    }
    handles.push_back(SeedLiveBlock(b, sb));
  }
  last = prev;
  for (BlockIndex b = first; b != kNil; b = blocks_[b].next) {
    if (blocks_[b].kind == Kind::kFree) InsertIntoPool(b);
  }
  return first;
}

Handle TorchAllocator::SeedLiveBlock(BlockIndex b, const SeedBlock& sb) {
  Block& live = blocks_[b];
  const bool small = live.small;
  const int64_t size = static_cast<int64_t>(sb.size.value());
  live.kind = Kind::kAllocated;
  live.requested = sb.requested;
  live.id = sb.id;
  live.handle = next_handle_++;
  live_.Insert(live.handle, b);
  stats_.allocation.Increase(small, 1);
  stats_.allocated_bytes.Increase(small, size);
  stats_.active.Increase(small, 1);
  stats_.active_bytes.Increase(small, size);
  stats_.requested_bytes.Increase(small, static_cast<int64_t>(sb.requested.value()));
  if (sb.size >= options_.max_split_size) stats_.oversize_allocations.Increase(1);
  if (sb.state == BlockState::kPendingFree) {
    MarkFreeRequested(b);
    pending_[live.handle] = b;
  }
  return Handle(live.handle);
}

}  // namespace hbmsim::allocator::torch
