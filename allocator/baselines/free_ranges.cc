#include "allocator/baselines/free_ranges.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::baselines {

void FreeRanges::Insert(uint64_t offset, uint64_t size) {
  by_address_.emplace(offset, size);
  if (index_by_size_) by_size_.emplace(size, offset);
  total_ += size;
}

void FreeRanges::Erase(std::map<uint64_t, uint64_t>::iterator it) {
  if (index_by_size_) by_size_.erase({it->second, it->first});
  total_ -= it->second;
  by_address_.erase(it);
}

void FreeRanges::Release(uint64_t offset, uint64_t size) {
  auto next = by_address_.lower_bound(offset);
  if (next != by_address_.end() && next->first == offset + size) {
    size += next->second;
    Erase(next);
  }
  auto prev = by_address_.lower_bound(offset);
  if (prev != by_address_.begin()) {
    --prev;
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      Erase(prev);
    }
  }
  Insert(offset, size);
}

void FreeRanges::Take(uint64_t offset, uint64_t size) {
  auto it = by_address_.upper_bound(offset);
  --it;  // the range containing offset; callers only take what they found free
  const uint64_t base = it->first;
  const uint64_t end = it->first + it->second;
  Erase(it);
  if (base < offset) Insert(base, offset - base);
  if (offset + size < end) Insert(offset + size, end - (offset + size));
}

std::optional<uint64_t> FreeRanges::FirstFit(uint64_t size) const {
  for (const auto& [offset, length] : by_address_) {
    if (length >= size) return offset;
  }
  return std::nullopt;
}

std::optional<uint64_t> FreeRanges::BestFit(uint64_t size) const {
  auto it = by_size_.lower_bound({size, 0});
  if (it == by_size_.end()) return std::nullopt;
  return it->second;
}

uint64_t FreeRanges::Largest() const {
  if (index_by_size_) return by_size_.empty() ? 0 : by_size_.rbegin()->first;
  uint64_t largest = 0;
  for (const auto& [offset, length] : by_address_) largest = std::max(largest, length);
  return largest;
}

absl::Status FreeRanges::Check() const {
  uint64_t sum = 0;
  std::optional<uint64_t> prev_end;
  for (const auto& [offset, length] : by_address_) {
    if (length == 0) return absl::InternalError(fmt::format("empty free range at {}", offset));
    if (prev_end && *prev_end >= offset) {
      return absl::InternalError(fmt::format("free range at {} overlaps or touches the one before", offset));
    }
    if (index_by_size_ && !by_size_.contains({length, offset})) {
      return absl::InternalError(fmt::format("free range at {} is missing from the size index", offset));
    }
    prev_end = offset + length;
    sum += length;
  }
  if (index_by_size_ && by_size_.size() != by_address_.size()) {
    return absl::InternalError(
        fmt::format("size index holds {} ranges, address index {}", by_size_.size(), by_address_.size()));
  }
  if (sum != total_)
    return absl::InternalError(fmt::format("free total is {} but ranges sum to {}", total_, sum));
  return absl::OkStatus();
}

}  // namespace hbmsim::baselines
