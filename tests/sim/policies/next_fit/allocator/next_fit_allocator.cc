#include "tests/sim/policies/next_fit/allocator/next_fit_allocator.h"

#include <algorithm>
#include <iterator>

#include "fmt/format.h"

namespace hbmsim::allocator {

NextFitAllocator::NextFitAllocator(const NextFitOptions& options)
    : options_(options), region_(options.memory_limit.RoundDown(options.alignment.value()).value()) {
  if (region_ > 0) free_[0] = region_;
  stats_.bytes_limit = static_cast<int64_t>(region_);
  stats_.pool_bytes = static_cast<int64_t>(region_);
  stats_.peak_pool_bytes = static_cast<int64_t>(region_);
}

std::optional<uint64_t> NextFitAllocator::TakeNextFit(uint64_t size) {
  auto start = free_.upper_bound(cursor_);
  if (start != free_.begin() && std::prev(start)->first + std::prev(start)->second > cursor_) --start;
  auto it = start;
  for (size_t seen = 0; seen < free_.size(); ++seen) {
    if (it == free_.end()) it = free_.begin();
    if (it->second >= size) {
      const uint64_t at = it->first, rest = it->second - size;
      free_.erase(it);
      if (rest > 0) free_[at + size] = rest;
      cursor_ = at + size;
      return at;
    }
    ++it;
  }
  return std::nullopt;
}

AllocResult NextFitAllocator::Allocate(const AllocRequest& req) {
  AllocResult r;
  r.rounded = req.bytes.RoundUp(options_.alignment.value());
  if (req.bytes.is_zero()) {
    r.handle = kNullHandle;
    return r;
  }
  const std::optional<uint64_t> at = TakeNextFit(r.rounded.value());
  if (!at) {
    r.free_bytes = Bytes(FreeBytes());
    r.largest_free_block = Bytes(LargestFree());
    r.status = ClassifyFailure(r.rounded, r.free_bytes);
    return r;
  }
  live_[*at] = Live{r.rounded.value(), req.bytes.value(), req.id.value(), req.stream.value()};
  stats_.num_allocs++;
  stats_.bytes_in_use += static_cast<int64_t>(r.rounded.value());
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(r.rounded.value()));
  r.handle = Handle(*at);
  r.has_offset = true;
  r.offset = Offset(*at);
  r.size = r.rounded;
  return r;
}

void NextFitAllocator::Release(uint64_t offset, uint64_t size) {
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin() && std::prev(next)->first + std::prev(next)->second == offset) {
    std::prev(next)->second += size;
    return;
  }
  free_[offset] = size;
}

void NextFitAllocator::Free(Handle h) {
  auto it = live_.find(h.value());
  if (it == live_.end()) return;  // kNullHandle: a zero-byte request
  stats_.bytes_in_use -= static_cast<int64_t>(it->second.size);
  Release(it->first, it->second.size);
  live_.erase(it);
}

uint64_t NextFitAllocator::LargestFree() const {
  uint64_t largest = 0;
  for (const auto& [offset, size] : free_) largest = std::max(largest, size);
  return largest;
}

uint64_t NextFitAllocator::FreeBytes() const {
  uint64_t total = 0;
  for (const auto& [offset, size] : free_) total += size;
  return total;
}

AllocatorStats NextFitAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes = static_cast<int64_t>(LargestFree());
  return s;
}

void NextFitAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  if (region_ == 0) return;
  v.OnRegion({Offset(0), Bytes(region_), 0});
  auto used = live_.begin();
  auto free = free_.begin();
  while (used != live_.end() || free != free_.end()) {
    if (free == free_.end() || (used != live_.end() && used->first < free->first)) {
      const Live& b = used->second;
      v.OnBlock({Offset(used->first), Bytes(b.size), Bytes(b.requested), BlockState::kInUse, used->first,
                 kNoHandle, b.id, b.stream});
      ++used;
    } else {
      v.OnBlock({Offset(free->first), Bytes(free->second), Bytes(0), BlockState::kFree});
      ++free;
    }
  }
}

absl::Status NextFitAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  uint64_t in_use = 0;
  for (const auto& [offset, b] : live_) in_use += b.size;
  if (static_cast<int64_t>(in_use) != stats_.bytes_in_use) {
    return absl::InternalError(fmt::format("next_fit: blocks hold {} B, stats say {}", in_use, stats_.bytes_in_use));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
