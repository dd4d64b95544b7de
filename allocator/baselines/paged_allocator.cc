#include "allocator/baselines/paged_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::allocator {

PagedAllocator::PagedAllocator(const PagedOptions& options)
    : options_(options),
      // At most half the address space is backed, so the physical pages decide a
      // request and not its virtual placement (see the model in the header).
      pages_total_(std::min(options.memory_limit.value(), kVirtualSpace / 2) / options.page_size) {
  virtual_free_.Release(0, kVirtualSpace);
  stats_.bytes_limit = StatBytes(options_.memory_limit);
  stats_.pool_bytes = 0;
  stats_.peak_pool_bytes = 0;
}

AllocResult PagedAllocator::Fail(Bytes rounded) const {
  AllocResult r;
  r.rounded = rounded;
  // Pages are fungible: what is free is also the largest block one can get.
  r.free_bytes = Bytes((pages_total_ - pages_used_) * options_.page_size);
  r.largest_free_block = r.free_bytes;
  r.status = ClassifyFailure(rounded, r.free_bytes);
  return r;
}

AllocResult PagedAllocator::Allocate(const AllocRequest& req) {
  const Bytes rounded = req.bytes.RoundUp(options_.page_size);
  if (req.bytes.is_zero()) {
    AllocResult r;
    r.handle = kNullHandle;
    return r;
  }
  const uint64_t pages = rounded.value() / options_.page_size;
  if (rounded == Bytes::Max() || pages > pages_total_ - pages_used_) return Fail(rounded);
  const std::optional<uint64_t> va = virtual_free_.TakeFirstFit(rounded.value());
  if (!va) return Fail(rounded);  // 64 PiB of address space cut to pieces: never in practice
  live_.emplace(*va, Block{pages, req.bytes.value(), req.id.value(), req.stream.value()});
  pages_used_ += pages;
  pages_mapped_ = std::max(pages_mapped_, pages_used_);
  stats_.num_allocs++;
  stats_.bytes_in_use = static_cast<int64_t>(pages_used_ * options_.page_size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(rounded.value()));
  stats_.pool_bytes = static_cast<int64_t>(pages_mapped_ * options_.page_size);
  stats_.peak_pool_bytes = stats_.pool_bytes;  // pages stay mapped: the pool never shrinks
  AllocResult r;
  r.rounded = rounded;
  r.handle = Handle(*va);
  r.has_offset = true;
  r.offset = Offset(*va);
  r.size = rounded;
  return r;
}

void PagedAllocator::Free(Handle h) {
  auto it = live_.find(h.value());
  if (it == live_.end()) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle the paged policy never issued");
    return;
  }
  virtual_free_.Release(it->first, it->second.pages * options_.page_size);
  pages_used_ -= it->second.pages;
  stats_.bytes_in_use = static_cast<int64_t>(pages_used_ * options_.page_size);
  live_.erase(it);
}

AllocatorStats PagedAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes = StatBytes(Bytes((pages_total_ - pages_used_) * options_.page_size));
  return s;
}

void PagedAllocator::AppendCounters(Counters& out) const {
  out.push_back({"pages_total", static_cast<int64_t>(pages_total_)});
  out.push_back({"pages_mapped", static_cast<int64_t>(pages_mapped_)});
  out.push_back({"pages_used", static_cast<int64_t>(pages_used_)});
}

void PagedAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  v.OnRegion({Offset(0), Bytes(kVirtualSpace), 0});
  std::vector<std::pair<uint64_t, const Block*>> by_address;
  by_address.reserve(live_.size());
  for (const auto& [va, block] : live_) by_address.emplace_back(va, &block);
  std::sort(by_address.begin(), by_address.end());  // addresses are distinct
  uint64_t cursor = 0;
  for (const auto& [va, block] : by_address) {
    if (va > cursor) {
      v.OnBlock(
          {Offset(cursor), Bytes(va - cursor), Bytes(0), BlockState::kUnmapped, kNoHandle, kNoHandle, 0, 0});
    }
    const uint64_t size = block->pages * options_.page_size;
    v.OnBlock({Offset(va), Bytes(size), Bytes(block->requested), BlockState::kInUse, va, kNoHandle, block->id,
               block->stream});
    cursor = va + size;
  }
  // The pages mapped but unused belong to no address (any request may take
  // them); they show as one free block at the top of the address space, so
  // the walk holds what the pool holds: the mapped pages.
  const uint64_t cached = std::min((pages_mapped_ - pages_used_) * options_.page_size, kVirtualSpace - cursor);
  if (cursor < kVirtualSpace - cached) {
    v.OnBlock({Offset(cursor), Bytes(kVirtualSpace - cached - cursor), Bytes(0), BlockState::kUnmapped, kNoHandle,
               kNoHandle, 0, 0});
  }
  if (cached > 0) {
    v.OnBlock({Offset(kVirtualSpace - cached), Bytes(cached), Bytes(0), BlockState::kFree, kNoHandle, kNoHandle, 0,
               0});
  }
}

absl::Status PagedAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = virtual_free_.Check(); !s.ok()) return s;
  uint64_t pages = 0;
  for (const auto& [va, block] : live_) pages += block.pages;
  if (pages != pages_used_) {
    return absl::InternalError(
        fmt::format("live blocks hold {} pages but {} are counted used", pages, pages_used_));
  }
  if (pages_used_ > pages_mapped_ || pages_mapped_ > pages_total_) {
    return absl::InternalError(fmt::format("pages: used {} mapped {} total {} out of order", pages_used_,
                                           pages_mapped_, pages_total_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
