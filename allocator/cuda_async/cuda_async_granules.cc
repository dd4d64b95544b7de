// Granule arithmetic: what a placement costs in physical memory, the largest
// request that fits, and giving cached granules back (remap, release).
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "allocator/cuda_async/cuda_async_allocator.h"

namespace hbmsim::allocator {

uint64_t CudaAsyncAllocator::NeedToMap(const Range& r, uint64_t begin, uint64_t size) const {
  if (r.mapped * options_.granule == r.size) return 0;  // a fully mapped range
  const uint64_t lo = FirstGranule(r, begin);
  const uint64_t hi = EndGranule(r, begin + size);
  if (hi <= r.mapped_prefix) return 0;
  uint64_t unmapped = 0;
  for (uint64_t i = lo; i < hi; ++i) unmapped += i < r.is_mapped.size() && r.is_mapped[i] != 0 ? 0 : 1;
  return unmapped;
}

bool CudaAsyncAllocator::Held(const Range& r, uint64_t granule_start) const {
  const uint64_t i = FirstGranule(r, granule_start);
  return i < r.held.size() && r.held[i] > 0;
}

bool CudaAsyncAllocator::Held(uint64_t granule_start) const {
  return Held(std::prev(ranges_.upper_bound(granule_start))->second, granule_start);
}

// Inside a free block only its first and last granule can be shared with a
// held neighbour; every other granule it touches costs one physical granule.
uint64_t CudaAsyncAllocator::RemapCost(const Block& b, uint64_t size) const {
  const uint64_t first = mapped_.Floor(b.address);
  const uint64_t last = mapped_.Floor(b.address + size - 1);
  uint64_t cost = mapped_.GranulesTouching(b.address, b.address + size);
  if (Held(*b.range, first)) --cost;
  if (last != first && Held(*b.range, last)) --cost;
  return cost;
}

// The largest request placed at the low end of free block `b` whose remap
// cost stays within `budget` granules.
uint64_t CudaAsyncAllocator::LargestAt(const Block& b, uint64_t budget) const {
  const uint64_t g = options_.granule;
  const uint64_t end = b.address + b.size;
  const uint64_t first = mapped_.Floor(b.address);
  const uint64_t last = mapped_.Floor(end - 1);
  const uint64_t paid = budget + (Held(*b.range, first) ? 1 : 0);  // granules counted from `first`
  const uint64_t reach = first + paid * g;
  if (reach >= end || (reach == last && Held(*b.range, last))) return b.size;
  return reach > b.address ? reach - b.address : 0;
}

// Free blocks from the largest down, while they could beat the best so far.
// A bin below the last holds sizes under BinSize(bin + 1): once that is no
// more than the best, no lower bin can change it.
uint64_t CudaAsyncAllocator::LargestRequest(const Want& w) const {
  const uint64_t budget = physical_granules_ - HeldGranules();
  uint64_t best = budget * options_.granule;  // a new range
  std::vector<allocator::FreeEntry> bin_entries;
  for (int bin = allocator::kNumBins - 1; bin >= 0; --bin) {
    if (free_index_.empty(bin)) continue;
    if (bin < allocator::kNumBins - 1 && allocator::BinSize(bin + 1).value() <= best) break;
    bin_entries.clear();
    free_index_.ForEach(bin, [&](const allocator::FreeEntry& e) { bin_entries.push_back(e); });
    for (auto it = bin_entries.rbegin(); it != bin_entries.rend() && it->size > best; ++it) {
      best = std::max(best, LargestAt(blocks_[it->handle], budget));
    }
  }
  for (const auto& [stream, index] : queued_index_) {
    const bool usable = w.any_queued || (w.stream.has_value() && *w.stream == stream);
    if (usable) best = std::max(best, index.rbegin()->size);
  }
  return best;
}

void CudaAsyncAllocator::MapGranules(Range& r, uint64_t begin, uint64_t end) {
  if (r.mapped * options_.granule == r.size) return;
  // The whole range (preallocation) leaves it fully mapped, where the flags
  // are not read: they are not grown to its (possibly huge) size.
  const bool whole = begin == r.base && end == r.base + r.size;
  if (!whole) {
    const uint64_t lo = FirstGranule(r, begin);
    const uint64_t hi = FirstGranule(r, end);
    if (hi <= r.mapped_prefix) return;  // nearly always: a reuse inside memory mapped before
    if (hi > r.is_mapped.size()) r.is_mapped.resize(hi, 0);
    uint64_t i = lo;
    while (i < hi && r.is_mapped[i] != 0) ++i;
    if (i == hi) return;
  }
  for (const auto& [hole_lo, hole_hi] : mapped_.Holes(begin, end)) {
    mapped_.Map(hole_lo, hole_hi);
    r.mapped += mapped_.Number(hole_hi - hole_lo);
    if (!whole) {
      std::fill(r.is_mapped.begin() + static_cast<ptrdiff_t>(FirstGranule(r, hole_lo)),
                r.is_mapped.begin() + static_cast<ptrdiff_t>(FirstGranule(r, hole_hi)), uint8_t{1});
    }
    Notify({PolicyEventKind::kRegionExtended, Bytes(hole_hi - hole_lo), Offset(hole_lo), kRegionPagesMapped, 0});
  }
  while (r.mapped_prefix < r.is_mapped.size() && r.is_mapped[r.mapped_prefix] != 0) ++r.mapped_prefix;
}

// Runs of adjacent granules are unmapped and reported together; a run that
// crosses from one VA range into the next (ranges may touch) is two events,
// since each range is its own region of the memory map.
void CudaAsyncAllocator::UnmapGranules(std::vector<uint64_t> granules) {
  const uint64_t g = options_.granule;
  std::sort(granules.begin(), granules.end());
  for (size_t i = 0; i < granules.size();) {
    const uint64_t begin = granules[i];
    Range& range = std::prev(ranges_.upper_bound(begin))->second;
    const uint64_t range_end = range.base + range.size;
    uint64_t end = begin + g;
    for (++i; i < granules.size() && granules[i] == end && end < range_end; ++i) end += g;
    mapped_.Unmap(begin, end);
    // A fully mapped range's flags may be stale or short (see MapGranules).
    if (range.mapped * g == range.size) {
      range.is_mapped.assign(range.size / g, 1);
      range.mapped_prefix = range.size / g;
    }
    range.mapped -= (end - begin) / g;
    const uint64_t lo = (begin - range.base) / g;
    range.mapped_prefix = std::min(range.mapped_prefix, lo);
    const uint64_t hi = std::min<uint64_t>((end - range.base) / g, range.is_mapped.size());
    for (uint64_t k = lo; k < hi; ++k) range.is_mapped[k] = 0;
    unmapped_since_drop_ = true;
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
void CudaAsyncAllocator::ReleaseAfterFree(uint32_t id) {
  const uint64_t g = options_.granule;
  const uint64_t keep = release_keep_;
  if (mapped_.count() <= keep) return;
  const uint64_t before = mapped_.count();
  const Block& b = blocks_[id];
  std::vector<uint64_t> own;
  for (uint64_t at = mapped_.Ceil(b.address + b.size);
       at > mapped_.Floor(b.address) && mapped_.count() - own.size() > keep; at -= g) {
    if (!Held(*b.range, at - g) && mapped_.MappedIn(at - g, at) == 1) own.push_back(at - g);
  }
  UnmapGranules(std::move(own));
  const uint64_t cached = mapped_.count() - HeldGranules();
  if (mapped_.count() > keep && cached > 0) UnmapCached(std::min(mapped_.count() - keep, cached), 0, 0);
  granules_released_ += static_cast<int64_t>(before - mapped_.count());
  NoteMapped();
  DropEmptyRanges();
}

// A range with no held block and nothing mapped goes back to the device. Only
// an unmap can leave one (a free keeps its granules mapped; a new range maps
// some at once), so with none since the last look there is nothing to do.
void CudaAsyncAllocator::DropEmptyRanges() {
  if (!unmapped_since_drop_) return;
  unmapped_since_drop_ = false;
  for (auto range = ranges_.begin(); range != ranges_.end();) {
    const Range& r = range->second;
    const Block& block = blocks_[r.first];
    const bool empty = block.kind == Kind::kFree && block.size == r.size && r.mapped == 0;
    if (!empty) {
      ++range;
      continue;
    }
    Unindex(r.first);
    DropBlock(r.first);
    ++ranges_released_;
    range = ranges_.erase(range);
  }
}

}  // namespace hbmsim::allocator
