#include "allocator/cuda_async/mapped_granules.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::allocator::cuda_async {

uint64_t MappedGranules::MappedIn(uint64_t begin, uint64_t end) const {
  uint64_t bytes = 0;
  auto it = runs_.upper_bound(begin);
  if (it != runs_.begin()) --it;
  for (; it != runs_.end() && it->first < end; ++it) {
    const uint64_t lo = std::max(it->first, begin);
    const uint64_t hi = std::min(it->second, end);
    if (hi > lo) bytes += hi - lo;
  }
  return bytes / granule_;
}

std::vector<std::pair<uint64_t, uint64_t>> MappedGranules::Holes(uint64_t begin, uint64_t end) const {
  std::vector<std::pair<uint64_t, uint64_t>> holes;
  auto it = runs_.upper_bound(begin);
  if (it != runs_.begin() && std::prev(it)->second > begin) --it;
  uint64_t at = begin;
  for (; it != runs_.end() && it->first < end && at < end; ++it) {
    if (it->first > at) holes.emplace_back(at, it->first);
    at = std::max(at, it->second);
  }
  if (at < end) holes.emplace_back(at, end);
  return holes;
}

void MappedGranules::Map(uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  count_ += (end - begin) / granule_ - MappedIn(begin, end);
  // Absorb every run that overlaps or touches [begin, end).
  auto it = runs_.upper_bound(begin);
  if (it != runs_.begin() && std::prev(it)->second >= begin) --it;
  while (it != runs_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = runs_.erase(it);
  }
  runs_.emplace(begin, end);
}

void MappedGranules::Unmap(uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  count_ -= MappedIn(begin, end);
  auto it = runs_.upper_bound(begin);
  if (it != runs_.begin() && std::prev(it)->second > begin) --it;
  while (it != runs_.end() && it->first < end) {
    const uint64_t lo = it->first;
    const uint64_t hi = it->second;
    it = runs_.erase(it);
    if (lo < begin) runs_.emplace(lo, begin);
    if (hi > end) it = runs_.emplace(end, hi).first;
  }
}

absl::Status MappedGranules::Check() const {
  uint64_t bytes = 0;
  uint64_t previous_end = 0;
  bool first = true;
  for (const auto& [start, end] : runs_) {
    if (start % granule_ != 0 || end % granule_ != 0 || end <= start) {
      return absl::InternalError(
          fmt::format("mapped run [{}, {}) is empty or not granule aligned", start, end));
    }
    if (!first && start <= previous_end) {
      return absl::InternalError(
          fmt::format("mapped run at {} overlaps or touches the one ending at {}", start, previous_end));
    }
    bytes += end - start;
    previous_end = end;
    first = false;
  }
  if (bytes / granule_ != count_) {
    return absl::InternalError(
        fmt::format("mapped runs hold {} granules but {} are counted", bytes / granule_, count_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator::cuda_async
