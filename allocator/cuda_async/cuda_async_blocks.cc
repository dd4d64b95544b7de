// VA ranges and the blocks tiling them: reserving, carving, freeing, indexes.
#include <algorithm>

#include "allocator/cuda_async/cuda_async_allocator.h"

namespace hbmsim {

uint64_t CudaAsyncAllocator::ReserveRange(uint64_t rounded) {
  const uint64_t size = std::max(options_.va_range, mapped_.Ceil(rounded));
  const uint64_t base = device_.Reserve(Bytes(size)).value();
  ranges_.emplace(base, size);
  Block b;
  b.size = size;
  b.range = base;
  blocks_.emplace(base, b);
  Index(base, b);
  ++ranges_reserved_;  // no event: VA holds no memory until granules are mapped
  return base;
}

// The buffer takes the low end of the free or queued block at `address`; the
// rest keeps its kind (a queued rest keeps the buffer's handle, so its
// free_completed still finds it).
void CudaAsyncAllocator::Carve(uint64_t address, uint64_t rounded, const AllocRequest& req) {
  auto it = blocks_.find(address);
  const Block old = it->second;
  Unindex(address, old);
  if (old.kind == Kind::kQueued) RemoveHeld(address, old);
  if (old.size > rounded) {
    Block rest = old;
    rest.size = old.size - rounded;
    blocks_.emplace(address + rounded, rest);
    Index(address + rounded, rest);
    if (rest.kind == Kind::kQueued) AddHeld(address + rounded, rest);
    if (rest.handle != kNoHandle) handles_[rest.handle] = address + rounded;
  } else if (old.handle != kNoHandle) {
    handles_.erase(old.handle);
  }
  Block& b = it->second;
  b = Block{};
  b.size = rounded;
  b.kind = Kind::kInUse;
  b.range = old.range;
  b.stream = req.stream.value();
  b.id = req.id.value();
  b.requested = req.bytes.value();
  b.handle = next_handle_++;
  handles_[b.handle] = address;
  AddHeld(address, b);
}

uint64_t CudaAsyncAllocator::MakeFree(BlockMap::iterator it) {
  Block& b = it->second;
  Unindex(it->first, b);
  if (b.kind != Kind::kFree) RemoveHeld(it->first, b);
  const uint64_t range = b.range;
  const uint64_t size = b.size;
  b = Block{};
  b.size = size;
  b.range = range;
  // Coalesce with free neighbours of the same range (ranges may touch in VA).
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.kind == Kind::kFree && next->second.range == range) {
    Unindex(next->first, next->second);
    b.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.kind == Kind::kFree && prev->second.range == range) {
      Unindex(prev->first, prev->second);
      prev->second.size += b.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  Index(it->first, it->second);
  return it->first;
}

void CudaAsyncAllocator::Index(uint64_t address, const Block& b) {
  if (b.kind == Kind::kFree) free_index_.emplace(b.size, address);
  if (b.kind == Kind::kQueued) queued_index_[b.stream].emplace(b.size, address);
}

void CudaAsyncAllocator::Unindex(uint64_t address, const Block& b) {
  if (b.kind == Kind::kFree) free_index_.erase({b.size, address});
  if (b.kind != Kind::kQueued) return;
  auto it = queued_index_.find(b.stream);
  if (it == queued_index_.end()) return;
  it->second.erase({b.size, address});
  if (it->second.empty()) queued_index_.erase(it);
}

CudaAsyncAllocator::BlockMap::iterator CudaAsyncAllocator::FindHandle(Handle h) {
  if (h == kNullHandle) return blocks_.end();
  auto found = handles_.find(h.value());
  if (found == handles_.end()) return blocks_.end();
  return blocks_.find(found->second);
}

void CudaAsyncAllocator::AddHeld(uint64_t address, const Block& b) {
  held_bytes_ += b.size;
  const uint64_t g = options_.granule;
  for (uint64_t i = mapped_.Floor(address) / g; i < mapped_.Ceil(address + b.size) / g; ++i) ++held_refs_[i];
}

void CudaAsyncAllocator::RemoveHeld(uint64_t address, const Block& b) {
  held_bytes_ -= b.size;
  const uint64_t g = options_.granule;
  for (uint64_t i = mapped_.Floor(address) / g; i < mapped_.Ceil(address + b.size) / g; ++i) {
    auto it = held_refs_.find(i);
    if (--it->second == 0) held_refs_.erase(it);
  }
}

}  // namespace hbmsim
