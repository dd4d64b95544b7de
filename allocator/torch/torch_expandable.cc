// Expandable segments (§1.10): a VA range per need, physical pages mapped on
// demand (2 MiB small, large_segment_size large), free whole pages unmapped by
// release_cached_blocks.
#include <algorithm>

#include "allocator/torch/torch_allocator.h"

namespace hbmsim::allocator::torch {

Bytes TorchAllocator::PageSize(bool small) const {
  return small ? Bytes(kSmallBuffer) : options_.large_segment_size;
}

// ExpandableSegment's constructor: numSegments(device_total + device_total / 8)
// pages of address space, i.e. ceil(1.125 × device memory / page) pages
// (RangeSizeFor, torch_windows.cc).
Bytes TorchAllocator::ExpandableRangeSize(bool small) const {
  const Bytes memory =
      options_.capacity == Bytes::Max() ? options_.expandable_va_capacity : options_.capacity;
  return RangeSizeFor(memory, PageSize(small));
}

// try_allocate_expandable_block: find room (free + unmapped run), map just
// enough pages, return the mapped block (taken out of the pool).
std::optional<TorchAllocator::BlockIndex> TorchAllocator::TryAllocateExpandable(const Params& p) {
  if (windows_ && p.recorded) window_.Only(options_.capacity);
  BlockIndex candidate = FindExpandableBlock(p);
  if (blocks_[candidate].kind == Kind::kUnmapped && !MapBlock(candidate, TailOrLess(candidate, p.rounded))) {
    return std::nullopt;
  }
  while (blocks_[candidate].size < p.rounded) {
    // free → unmapped → ...: map part of the unmapped successor; it absorbs us.
    const Bytes remaining = p.rounded - blocks_[candidate].size;
    const BlockIndex next = blocks_[candidate].next;
    // The range ends first: the request is larger than a whole new VA range
    // (possible only with a capacity the range size cannot express).
    if (next == kNil) return std::nullopt;
    if (!MapBlock(next, TailOrLess(next, remaining))) return std::nullopt;
    candidate = next;
  }
  EraseFromPool(candidate);
  return candidate;
}

// find_expandable_block: the lowest-address unmapped block on this stream whose
// run of allocatable neighbours (starting at a free block just before it) holds
// the request; else a new VA range.
TorchAllocator::BlockIndex TorchAllocator::FindExpandableBlock(const Params& p) {
  Pool& pool = PoolOf(p.small);
  const auto allocatable = [&](BlockIndex b) {
    return b != kNil && (blocks_[b].kind == Kind::kFree || blocks_[b].kind == Kind::kUnmapped);
  };
  const auto has_room = [&](BlockIndex b) {
    Bytes bytes;
    while (bytes < p.rounded && allocatable(b)) {
      // The range's last block: whether it holds the rest depends on the capacity.
      if (IsTail(b)) return TailHolds(b, p.rounded - bytes);
      bytes += blocks_[b].size;
      b = blocks_[b].next;
    }
    return bytes >= p.rounded;
  };
  for (auto it = pool.unmapped.lower_bound(AddrKey{p.stream.value(), 0, kNil});
       it != pool.unmapped.end() && it->stream == p.stream.value(); ++it) {
    BlockIndex c = it->block;
    if (allocatable(blocks_[c].prev)) c = blocks_[c].prev;
    if (has_room(c)) return c;
  }
  const Bytes page = PageSize(p.small);
  Bytes va = ExpandableRangeSize(p.small);
  Offset base;
  const Bytes needed = p.rounded.RoundUp(page.value());
  if (p.recorded && !RangeIsFree(*p.recorded, needed)) TrimUnmappedTailAt(*p.recorded);
  const std::array<uint64_t, 2> before = ranges_reserved_;
  if (p.recorded && RangeIsFree(*p.recorded, needed)) {
    // The recorded range starts here; it cannot run into memory we already hold
    // (seeded ranges have unknown VA extents), so it is clipped at the next one.
    base = *p.recorded;
    va = std::min(va, SpaceAfter(base)).RoundDown(page.value());
  } else {
    base = NewSegmentBase(va, std::nullopt);
    ++ranges_reserved_[p.small ? 1 : 0];  // the device's next range (torch_windows.cc)
  }
  Block blk;
  blk.addr = base;
  blk.size = va;
  blk.stream = p.stream;
  blk.segment = base;
  blk.small = p.small;
  blk.expandable = true;
  blk.kind = Kind::kUnmapped;
  const BlockIndex b = NewBlock(blk);
  segments_[base.value()] = Segment{base, va, p.stream, p.small, true, b, before};
  InsertUnmapped(b);
  return b;
}

// A new range was recorded at `at`, inside the unmapped tail of a range we
// reserved: real VA ranges never overlap, so ours must end there. Shrinks it.
void TorchAllocator::TrimUnmappedTailAt(Offset at) {
  auto it = segments_.upper_bound(at.value());
  if (it == segments_.begin()) return;
  --it;
  Segment& seg = it->second;
  if (!seg.expandable || seg.base + seg.size <= at) return;
  BlockIndex last = seg.head;
  while (blocks_[last].next != kNil) last = blocks_[last].next;
  Block& tail = blocks_[last];
  if (tail.kind != Kind::kUnmapped || tail.addr > at || last == seg.head) return;
  EraseUnmapped(last);
  if (tail.addr == at) {
    blocks_[tail.prev].next = kNil;
    DeleteBlock(last);
  } else {
    tail.size = at - tail.addr;
    InsertUnmapped(last);
  }
  seg.size = at - seg.base;
}

// map_block: map whole pages from the start of an unmapped block; the rest stays
// unmapped behind it. Fails (all or nothing) when capacity would be exceeded.
bool TorchAllocator::MapBlock(BlockIndex b, Bytes size) {
  const Bytes page = PageSize(blocks_[b].small);
  const Bytes want = size.RoundUp(page.value());
  // The tail: a rest stays unmapped behind the pages iff it is longer than them.
  const Bytes mapped = IsTail(b) && TailHolds(b, want + Bytes(1)) ? want : TailOrLess(b, want);
  const Bytes reserved(static_cast<uint64_t>(stats_.reserved_bytes.all().current));
  if (!CapacityHolds(reserved, mapped)) return false;  // cuMemCreate fails
  EraseUnmapped(b);
  const Offset start = blocks_[b].addr;
  blocks_[b].kind = Kind::kFree;
  if (mapped < blocks_[b].size) {
    Block rest = blocks_[b];
    rest.addr = start + mapped;
    rest.size = blocks_[b].size - mapped;
    rest.kind = Kind::kUnmapped;
    rest.prev = b;
    const BlockIndex r = NewBlock(rest);
    if (blocks_[r].next != kNil) blocks_[blocks_[r].next].prev = r;
    blocks_[b].next = r;
    blocks_[b].size = mapped;
    InsertUnmapped(r);
  }
  TryMerge(b, blocks_[b].prev);
  TryMerge(b, blocks_[b].next);
  InsertIntoPool(b);
  stats_.reserved_bytes.Increase(blocks_[b].small, static_cast<int64_t>(mapped.value()));
  ++stats_.num_device_alloc;
  Notify({PolicyEventKind::kRegionExtended, mapped, start, kDetailMap});
  return true;
}

// unmap_block: unmap every whole page inside a free block; partial pages at the
// edges stay mapped as free blocks of their own.
void TorchAllocator::UnmapBlock(BlockIndex b) {
  const Block blk = blocks_[b];
  const Bytes page = PageSize(blk.small);
  const Bytes rel_begin = (blk.addr - blk.segment).RoundUp(page.value());
  const Bytes rel_end = (blk.addr + blk.size - blk.segment).RoundDown(page.value());
  if (rel_end <= rel_begin) return;
  EraseFromPool(b);
  const Offset start = blk.segment + rel_begin;
  const Bytes unmapped = rel_end - rel_begin;
  if (start > blk.addr) {
    Block before = blk;
    before.size = start - blk.addr;
    before.next = b;
    const BlockIndex f = NewBlock(before);
    if (blocks_[f].prev != kNil) blocks_[blocks_[f].prev].next = f;
    blocks_[b].prev = f;
    Segment& seg = segments_.at(blk.segment.value());
    if (seg.head == b) seg.head = f;
    InsertIntoPool(f);
  }
  const Offset end = start + unmapped;
  if (end < blk.addr + blk.size) {
    Block after = blk;
    after.addr = end;
    after.size = blk.addr + blk.size - end;
    after.prev = b;
    const BlockIndex f = NewBlock(after);
    if (blocks_[f].next != kNil) blocks_[blocks_[f].next].prev = f;
    blocks_[b].next = f;
    InsertIntoPool(f);
  }
  blocks_[b].addr = start;
  blocks_[b].size = unmapped;
  blocks_[b].kind = Kind::kUnmapped;
  TryMerge(b, blocks_[b].prev);
  TryMerge(b, blocks_[b].next);
  InsertUnmapped(b);
  stats_.reserved_bytes.Decrease(blk.small, static_cast<int64_t>(unmapped.value()));
  ++stats_.num_device_free;
  Notify({PolicyEventKind::kRegionReleased, unmapped, start, kDetailUnmap});
}

// A VA range with nothing mapped any more is given back.
void TorchAllocator::ReleaseExpandableSegment(BlockIndex b) {
  EraseUnmapped(b);
  segments_.erase(blocks_[b].segment.value());
  DeleteBlock(b);
}

}  // namespace hbmsim::allocator::torch
