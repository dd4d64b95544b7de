// Granule arithmetic: what a placement costs in physical memory, the largest
// request that fits, and giving cached granules back (remap, release).
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "allocator/cuda_async/cuda_async_allocator.h"

namespace hbmsim {

uint64_t CudaAsyncAllocator::NeedToMap(uint64_t begin, uint64_t size) const {
  const uint64_t end = begin + size;
  return mapped_.GranulesTouching(begin, end) - mapped_.MappedIn(mapped_.Floor(begin), mapped_.Ceil(end));
}

uint64_t CudaAsyncAllocator::HeldGranules() const { return held_refs_.size(); }

bool CudaAsyncAllocator::Held(uint64_t granule_start) const {
  return held_refs_.contains(granule_start / options_.granule);
}

// Inside a free block only its first and last granule can be shared with a
// held neighbour; every other granule it touches costs one physical granule.
uint64_t CudaAsyncAllocator::RemapCost(uint64_t begin, uint64_t size) const {
  const uint64_t first = mapped_.Floor(begin);
  const uint64_t last = mapped_.Floor(begin + size - 1);
  uint64_t cost = mapped_.GranulesTouching(begin, begin + size);
  if (Held(first)) --cost;
  if (last != first && Held(last)) --cost;
  return cost;
}

// The largest request placed at the low end of free block `b` whose remap
// cost stays within `budget` granules.
uint64_t CudaAsyncAllocator::LargestAt(uint64_t address, const Block& b, uint64_t budget) const {
  const uint64_t g = options_.granule;
  const uint64_t end = address + b.size;
  const uint64_t first = mapped_.Floor(address);
  const uint64_t last = mapped_.Floor(end - 1);
  const uint64_t paid = budget + (Held(first) ? 1 : 0);  // granules counted from `first`
  const uint64_t reach = first + paid * g;
  if (reach >= end || (reach == last && Held(last))) return b.size;
  return reach > address ? reach - address : 0;
}

uint64_t CudaAsyncAllocator::LargestRequest(const Want& w) const {
  const uint64_t budget = physical_granules_ - HeldGranules();
  uint64_t best = budget * options_.granule;  // a new range
  for (auto it = free_index_.rbegin(); it != free_index_.rend() && it->first > best; ++it) {
    best = std::max(best, LargestAt(it->second, blocks_.at(it->second), budget));
  }
  for (const auto& [stream, index] : queued_index_) {
    const bool usable = w.any_queued || (w.stream.has_value() && *w.stream == stream);
    if (usable) best = std::max(best, index.rbegin()->first);
  }
  return best;
}

void CudaAsyncAllocator::MapGranules(uint64_t begin, uint64_t end) {
  for (const auto& [lo, hi] : mapped_.Holes(begin, end)) {
    mapped_.Map(lo, hi);
    Notify({PolicyEventKind::kRegionExtended, Bytes(hi - lo), Offset(lo), kRegionPagesMapped, 0});
  }
}

// Runs of adjacent granules are unmapped and reported together; a run that
// crosses from one VA range into the next (ranges may touch) is two events,
// since each range is its own region of the memory map.
void CudaAsyncAllocator::UnmapGranules(std::vector<uint64_t> granules) {
  const uint64_t g = options_.granule;
  std::sort(granules.begin(), granules.end());
  for (size_t i = 0; i < granules.size();) {
    const uint64_t begin = granules[i];
    auto range = std::prev(ranges_.upper_bound(begin));
    const uint64_t range_end = range->first + range->second;
    uint64_t end = begin + g;
    for (++i; i < granules.size() && granules[i] == end && end < range_end; ++i) end += g;
    mapped_.Unmap(begin, end);
    Notify({PolicyEventKind::kRegionReleased, Bytes(end - begin), Offset(begin), kRegionPagesUnmapped, 0});
  }
}

void CudaAsyncAllocator::UnmapCached(uint64_t count, uint64_t keep_begin, uint64_t keep_end) {
  const uint64_t g = options_.granule;
  std::vector<uint64_t> victims;
  const auto& runs = mapped_.runs();
  for (auto run = runs.rbegin(); run != runs.rend() && victims.size() < count; ++run) {
    for (uint64_t at = run->second; at > run->first && victims.size() < count; at -= g) {
      const uint64_t granule = at - g;
      if (granule >= keep_begin && granule < keep_end) continue;
      if (!Held(granule)) victims.push_back(granule);
    }
  }
  UnmapGranules(std::move(victims));
  NoteMapped();
}

// At a completed free, mapped memory above the release threshold goes back:
// the freed block's own cached granules first, then the highest addresses.
void CudaAsyncAllocator::ReleaseAfterFree(uint64_t address) {
  const uint64_t g = options_.granule;
  const uint64_t keep = options_.release_threshold / g;
  if (mapped_.count() <= keep) return;
  const uint64_t before = mapped_.count();
  const Block& b = blocks_.at(address);
  std::vector<uint64_t> own;
  for (uint64_t at = mapped_.Ceil(address + b.size);
       at > mapped_.Floor(address) && mapped_.count() - own.size() > keep; at -= g) {
    if (!Held(at - g) && mapped_.MappedIn(at - g, at) == 1) own.push_back(at - g);
  }
  UnmapGranules(std::move(own));
  const uint64_t cached = mapped_.count() - HeldGranules();
  if (mapped_.count() > keep && cached > 0) UnmapCached(std::min(mapped_.count() - keep, cached), 0, 0);
  granules_released_ += static_cast<int64_t>(before - mapped_.count());
  NoteMapped();
  DropEmptyRanges();
}

// A range with no held block and nothing mapped goes back to the device.
void CudaAsyncAllocator::DropEmptyRanges() {
  for (auto range = ranges_.begin(); range != ranges_.end();) {
    auto block = blocks_.find(range->first);
    const bool empty = block->second.kind == Kind::kFree && block->second.size == range->second &&
                       mapped_.MappedIn(range->first, range->first + range->second) == 0;
    if (!empty) {
      ++range;
      continue;
    }
    Unindex(block->first, block->second);
    blocks_.erase(block);
    ++ranges_released_;
    range = ranges_.erase(range);
  }
}

void CudaAsyncAllocator::NoteMapped() {
  peak_granules_mapped_ = std::max(peak_granules_mapped_, mapped_.count());
  stats_.pool_bytes = static_cast<int64_t>(mapped_.count() * options_.granule);
  stats_.peak_pool_bytes = static_cast<int64_t>(peak_granules_mapped_ * options_.granule);
}

}  // namespace hbmsim
