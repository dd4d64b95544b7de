// VA ranges and the blocks tiling them: reserving, carving, freeing, indexes.
#include <algorithm>

#include "allocator/core/block_records.h"
#include "allocator/cuda_async/cuda_async_allocator.h"

namespace hbmsim::allocator {

uint32_t CudaAsyncAllocator::ReserveRange(uint64_t rounded) {
  const uint64_t size = std::max(options_.va_range, mapped_.Ceil(rounded));
  const uint64_t base = device_.Reserve(Bytes(size)).value();
  const uint32_t id = NewBlock();
  // Reserved upwards: the new range is the last one.
  Range& range = ranges_.emplace_hint(ranges_.end(), base, Range{})->second;
  range.base = base;
  range.size = size;
  range.first = id;
  Block& b = blocks_[id];
  b = Block{};
  b.address = base;
  b.size = size;
  b.range = &range;
  Index(id);
  ++ranges_reserved_;  // no event: VA holds no memory until granules are mapped
  return id;
}

uint32_t CudaAsyncAllocator::NewBlock() { return NewBlockRecord(blocks_, spare_blocks_); }

void CudaAsyncAllocator::DropBlock(uint32_t id) {
  blocks_[id].range = nullptr;
  spare_blocks_.push_back(id);
}

// The buffer takes the low end of the free or queued block `id` (its record
// stays at that address); the rest keeps its kind (a queued rest keeps the
// buffer's handle, so its free_completed still finds it). `indexed`: the
// block is still in its index (a free block the search took out is not).
void CudaAsyncAllocator::Carve(uint32_t id, uint64_t rounded, const AllocRequest& req, bool indexed) {
  const uint32_t rest = blocks_[id].size > rounded ? NewBlock() : kNone;  // before any reference
  Block& b = blocks_[id];
  const Block old = b;
  if (indexed) Unindex(id);  // (a free block taken by the search is out already)
  if (old.kind == Kind::kQueued) RemoveHeld(id);
  if (rest != kNone) {
    Block& r = blocks_[rest];
    r = old;
    r.address = old.address + rounded;
    r.size = old.size - rounded;
    r.prev = id;
    if (old.next != kNone) blocks_[old.next].prev = rest;
    b.next = rest;
    if (old.kind == Kind::kFree) {
      FileFree(rest, old.address + rounded, old.size - rounded);
    } else {
      Index(rest);
    }
    if (r.kind == Kind::kQueued) AddHeld(rest);
    if (r.handle != kNoHandle) *handles_.Find(r.handle) = rest;
  } else if (old.handle != kNoHandle) {
    handles_.Erase(old.handle);
  }
  b.size = rounded;
  b.kind = Kind::kInUse;
  b.completed = false;
  b.stream = req.stream.value();
  b.id = req.id.value();
  b.requested = req.bytes.value();
  b.handle = next_handle_++;
  handles_.Insert(b.handle, id);
  AddHeld(id);
}

uint32_t CudaAsyncAllocator::MakeFree(uint32_t id) {
  Block& b = blocks_[id];
  if (b.kind == Kind::kQueued) Unindex(id);  // an in-use block is in no index
  RemoveHeld(id);                            // in use or queued: held
  b.kind = Kind::kFree;
  b.completed = false;
  b.stream = 0;
  b.id = 0;
  b.requested = 0;
  b.handle = kNoHandle;
  // Coalesce with free neighbours (the links stay inside one range). The
  // merged extent is kept in registers and filed from them: reading back the
  // fields just stored would stall on store forwarding.
  uint64_t address = b.address;
  uint64_t size = b.size;
  if (b.next != kNone && blocks_[b.next].kind == Kind::kFree) {
    const uint32_t next = b.next;
    const Block& n = blocks_[next];
    UnfileFree(n.address, n.size);
    size += n.size;
    b.next = n.next;
    if (b.next != kNone) blocks_[b.next].prev = id;
    DropBlock(next);
  }
  if (b.prev != kNone && blocks_[b.prev].kind == Kind::kFree) {
    const uint32_t prev = b.prev;
    Block& p = blocks_[prev];
    UnfileFree(p.address, p.size);
    address = p.address;
    size += p.size;
    p.next = b.next;
    if (p.next != kNone) blocks_[p.next].prev = prev;
    DropBlock(id);
    id = prev;
  }
  blocks_[id].size = size;
  FileFree(id, address, size);
  return id;
}

void CudaAsyncAllocator::Index(uint32_t id) {
  const Block& b = blocks_[id];
  if (b.kind == Kind::kFree)
    free_index_.Insert(allocator::BinNumForSize(Bytes(b.size)), {b.size, b.address, id});
  if (b.kind == Kind::kQueued) queued_index_[b.stream].insert({b.size, b.address, id});
}

void CudaAsyncAllocator::Unindex(uint32_t id) {
  const Block& b = blocks_[id];
  if (b.kind == Kind::kFree) free_index_.Remove(allocator::BinNumForSize(Bytes(b.size)), b.size, b.address);
  if (b.kind != Kind::kQueued) return;
  auto it = queued_index_.find(b.stream);
  if (it == queued_index_.end()) return;
  it->second.erase({b.size, b.address, id});
  if (it->second.empty()) queued_index_.erase(it);
}

// The granules [lo, last] the block touches, counted from its range's base.
// Blocks do not overlap, so only the two ends can be shared with neighbours:
// every granule between is this block's alone (0 -> 1 here, 1 -> 0 below)
// and needs no test. The ends are counted without a branch on whether they
// are one granule (the loop over every granule this replaces exited at a
// size-dependent, so mispredicted, trip: 2 of 3 blocks touch one granule).
void CudaAsyncAllocator::AddHeld(uint32_t id) {
  const Block& b = blocks_[id];
  Range& r = *b.range;
  held_bytes_ += b.size;
  const uint64_t lo = FirstGranule(r, b.address);
  const uint64_t last = EndGranule(r, b.address + b.size) - 1;
  if (last >= r.held.size()) r.held.resize(last + 1, 0);
  const uint32_t two = last != lo ? 1 : 0;
  held_granules_ += r.held[lo]++ == 0 ? 1 : 0;
  const uint32_t at_last = r.held[last];  // (lo's new count when last == lo: left as it is)
  r.held[last] = at_last + two;
  held_granules_ += two & (at_last == 0 ? 1 : 0);
  if (last - lo > 1) {
    std::fill(r.held.begin() + static_cast<ptrdiff_t>(lo + 1), r.held.begin() + static_cast<ptrdiff_t>(last), 1);
    held_granules_ += last - lo - 1;
  }
}

void CudaAsyncAllocator::RemoveHeld(uint32_t id) {
  const Block& b = blocks_[id];
  Range& r = *b.range;
  held_bytes_ -= b.size;
  const uint64_t lo = FirstGranule(r, b.address);
  const uint64_t last = EndGranule(r, b.address + b.size) - 1;
  const uint32_t two = last != lo ? 1 : 0;
  held_granules_ -= --r.held[lo] == 0 ? 1 : 0;
  const uint32_t at_last = r.held[last] - two;
  r.held[last] = at_last;
  held_granules_ -= two & (at_last == 0 ? 1 : 0);
  if (last - lo > 1) {
    std::fill(r.held.begin() + static_cast<ptrdiff_t>(lo + 1), r.held.begin() + static_cast<ptrdiff_t>(last), 0);
    held_granules_ -= last - lo - 1;
  }
}

}  // namespace hbmsim::allocator
