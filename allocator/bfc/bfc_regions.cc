// Growing and shrinking the pool: Extend (REF §1.7), region coalescing (§1.6)
// and garbage collection of fully free regions (§1.9 step 4).
#include <algorithm>

#include "allocator/bfc/bfc_allocator.h"
#include "allocator/core/dcheck.h"

namespace hbmsim::allocator {

using bfc::ChunkHandle;
using bfc::kInvalidChunk;

Bytes BfcAllocator::Available() const {
  return options_.memory_limit.SaturatingSub(pool_bytes_).RoundDown(allocator::kMinAllocationSize);
}

// REF's Extend. The backpedal runs only under BfcOptions::device_capacity.
bool BfcAllocator::Extend(Bytes rounded, const AllocRequest& req) {
  const Bytes available = Available();
  // Until the limit has sized memory, the pool is the same under every limit
  // of the window; after, available is 0 under all of them.
  const bool window_open = windows_ && last_ == kInvalidChunk;
  if (window_open) {
    if (rounded > available) {
      window_.AtMost(pool_bytes_ + rounded - Bytes(1));
    } else {
      window_.AtLeast(pool_bytes_ + rounded);
    }
  }
  if (rounded > available) return false;  // nothing changes
  // Grow the target region size until the request fits; this persists even if
  // the device refuses below. curr > 0 here: available > 0 needs limit > 0,
  // and then curr >= 256. Saturation bounds the loop.
  bool increased = false;
  while (rounded > curr_region_allocation_bytes_) {
    curr_region_allocation_bytes_ += curr_region_allocation_bytes_;
    increased = true;
  }
  // Whether the limit cuts this region short. Without growth curr is
  // ceil256(limit) and always does; with growth curr is the window's own.
  bool sized_by_limit = false;
  if (window_open) {
    if (!options_.allow_growth) {
      sized_by_limit = true;
    } else if (curr_region_allocation_bytes_ > available) {
      window_.AtMost(pool_bytes_ + curr_region_allocation_bytes_ - Bytes(1));
      sized_by_limit = true;
    } else {
      window_.AtLeast(pool_bytes_ + curr_region_allocation_bytes_);
    }
  }
  const std::optional<Bytes> granted =
      NegotiateWithDevice(std::min(curr_region_allocation_bytes_, available), rounded);
  if (!granted) return false;
  const Bytes bytes = *granted;
  const Offset base = ChooseBase(bytes, req);
  // Geometric growth for the next Extend, unless this one already grew.
  if (!increased) curr_region_allocation_bytes_ += curr_region_allocation_bytes_;
  if (sized_by_limit) limit_origin_ = base.value() - pool_bytes_.value();  // may wrap: only differences count
  pool_bytes_ += bytes;
  stats_.pool_bytes = static_cast<int64_t>(pool_bytes_.value());
  stats_.peak_pool_bytes = std::max(*stats_.peak_pool_bytes, *stats_.pool_bytes);
  ++extends_;
  AddRegionMemory(base, bytes, sized_by_limit);
  return true;
}

// New memory comes from the device's next range, unless the request carries
// the address the recording saw (--check-recorded) and memory can start there.
// Extend runs only when no free chunk fits, so the request lands at the low
// end of the new memory, or, when the new memory extends a region whose free
// last chunk it merges with, at that chunk: either way the recorded address.
Offset BfcAllocator::ChooseBase(Bytes size, const AllocRequest& req) {
  if (req.recorded_address) {
    window_.Only(options_.memory_limit);  // CloneAt recomputes only device-chosen bases
    if (const std::optional<Offset> base = RecordedBase(*req.recorded_address, size)) return *base;
  }
  // Regions placed at recorded addresses may lie ahead of the device's next
  // range: skip past them (the device never hands out a range twice anyway).
  Offset base = device_.Reserve(size);
  while (const Region* r = OverlappingRegion(base, size)) {
    const Offset end = r->base + r->size;
    if (end > device_.next_address()) device_.Reserve(end - device_.next_address());
    base = device_.Reserve(size);
  }
  return base;
}

const BfcAllocator::Region* BfcAllocator::OverlappingRegion(Offset base, Bytes size) const {
  for (const Region& r : regions_) {
    if (base < r.base + r.size && r.base < base + size) return &r;
  }
  return nullptr;
}

std::optional<Offset> BfcAllocator::RecordedBase(Offset recorded, Bytes size) const {
  if (recorded.value() % allocator::kMinAllocationSize != 0) return std::nullopt;  // not a BFC address
  Offset base = recorded;
  if (options_.region_coalescing) {
    for (const Region& r : regions_) {
      const bfc::Chunk& last = chunks_.at(LastChunkOf(r));
      if (!last.in_use() && Offset(last.ptr) == recorded) base = r.base + r.size;  // grew that region
    }
  }
  if (base.value() > Bytes::Max().value() - size.value()) return std::nullopt;
  if (OverlappingRegion(base, size) != nullptr) return std::nullopt;  // the replay has diverged
  return base;
}

// One free chunk covers the new memory. With region coalescing it joins the
// region that ends where it starts (after that region's last chunk, merged
// with it if free); otherwise it is a region of its own.
void BfcAllocator::AddRegionMemory(Offset base, Bytes size, bool sized_by_limit) {
  Region* grown = options_.region_coalescing ? RegionEndingAt(base) : nullptr;
  const ChunkHandle h = chunks_.Allocate();
  bfc::Chunk& c = chunks_.at(h);
  c.ptr = base.value();
  c.size = size.value();
  c.prev = kInvalidChunk;
  c.next = kInvalidChunk;
  if (sized_by_limit) last_ = h;  // the tail (Coalesce keeps last_ on the chunk that holds it)
  if (grown != nullptr) {
    const ChunkHandle last = LastChunkOf(*grown);
    c.prev = last;
    chunks_.at(last).next = h;
    grown->size += size;
    ++region_extensions_;
    Notify({PolicyEventKind::kRegionExtended, size, base, kRegionWhole});
  } else {
    const auto after =
        std::find_if(regions_.begin(), regions_.end(), [base](const Region& r) { return r.base > base; });
    regions_.insert(after, Region{base, size, h});
    Notify({PolicyEventKind::kRegionAdded, size, base, kRegionWhole});
  }
  InsertIntoBin(Coalesce(h));
}

BfcAllocator::Region* BfcAllocator::RegionEndingAt(Offset end) {
  for (Region& r : regions_) {
    if (r.base + r.size == end) return &r;
  }
  return nullptr;
}

// REF walks the region from its first chunk too; Extend is rare, so a walk is
// cheaper than keeping a per-region tail up to date on every split and merge.
ChunkHandle BfcAllocator::LastChunkOf(const Region& r) const {
  ChunkHandle h = r.first;
  while (chunks_.at(h).next != kInvalidChunk) h = chunks_.at(h).next;
  return h;
}

// Adjacent free chunks are always merged, so a fully free region is one chunk.
bool BfcAllocator::RegionIsFree(const Region& r) const {
  const bfc::Chunk& first = chunks_.at(r.first);
  return !first.in_use() && first.size == r.size.value();
}

Bytes BfcAllocator::FreeRegionBytes() const {
  Bytes total;
  for (const Region& r : regions_) {
    if (RegionIsFree(r)) total += r.size;
  }
  return total;
}

// REF's DeallocateFreeRegions: release every fully free region, but only when
// its rough estimate says the request could then fit below the limit.
bool BfcAllocator::GarbageCollect(Bytes rounded) {
  if (!options_.garbage_collection) return false;
  const Bytes free_region_bytes = FreeRegionBytes();
  if (free_region_bytes.is_zero()) return false;
  // Not rounded down to 256, unlike Extend's check. Without growth (and no
  // device capacity to cut the first region short) this always returns: the
  // one region is free only as one chunk of floor256(limit), and a request it
  // could not hold is a multiple of 256 above that, so above the limit. That
  // is why limit windows need not narrow here.
  const bool declines = rounded > options_.memory_limit.SaturatingSub(pool_bytes_) + free_region_bytes;
  if (windows_ && options_.allow_growth) NoteCollect(rounded, free_region_bytes, declines);
  if (declines) return false;
  HBMSIM_DCHECK(options_.allow_growth || options_.device_capacity,
                "garbage collection released the one region of a pool that does not grow");

  ++garbage_collections_;
  const auto released = static_cast<uint64_t>(
      std::count_if(regions_.begin(), regions_.end(), [this](const Region& r) { return RegionIsFree(r); }));
  Notify({PolicyEventKind::kGarbageCollection, free_region_bytes, Offset(), released});
  std::vector<Region> kept;
  kept.reserve(regions_.size());
  for (const Region& r : regions_) {  // address order, as REF
    if (!RegionIsFree(r)) {
      kept.push_back(r);
      continue;
    }
    RemoveFromBin(r.first);
    chunks_.Release(r.first);
    pool_bytes_ -= r.size;
    ++regions_released_;
    Notify({PolicyEventKind::kRegionReleased, r.size, r.base, kRegionWhole});
  }
  regions_ = std::move(kept);
  stats_.pool_bytes = static_cast<int64_t>(pool_bytes_.value());
  return true;
}

// Which limits of the window decide a growing pool's collection alike
// (GarbageCollect: it declines when rounded > limit - pool + free). Before the
// limit has sized memory, the pool and the free regions are the same under
// every limit of the window: the window keeps the side its limit took. After,
// the pool is floor256(limit), so limit - pool < 256 while the request and the
// free regions are multiples of 256: the answer is every limit's, unless the
// region the limit sized is among the free ones. A collection that runs
// releases regions and moves every later one, which CloneAt does not redo:
// from there the run keeps its limit alone (PinWindow).
void BfcAllocator::NoteCollect(Bytes rounded, Bytes free_region_bytes, bool declines) {
  HBMSIM_DCHECK(rounded.value() % allocator::kMinAllocationSize == 0 &&
                    free_region_bytes.value() % allocator::kMinAllocationSize == 0,
                "requests and regions are multiples of 256");
  if (declines && last_ == kInvalidChunk) {
    window_.AtMost(pool_bytes_ + rounded - free_region_bytes - Bytes(1));
    return;
  }
  const bool sized_region_free =
      last_ != kInvalidChunk &&
      std::any_of(regions_.begin(), regions_.end(), [this](const Region& r) { return r.first == last_ && RegionIsFree(r); });
  if (declines && !sized_region_free) return;
  PinWindow();
}

void BfcAllocator::PinWindow() {
  windows_ = false;
  window_pinned_ = true;
  window_.Only(options_.memory_limit);
}

// The largest request that would succeed now: a free chunk, an Extend below
// the limit, or an Extend after GC released every fully free region.
Bytes BfcAllocator::LargestRequest() const {
  if (options_.device_capacity) return LargestRequestUnderCapacity(/*extend_only=*/false);
  const std::optional<allocator::FreeEntry> largest_chunk = bins_.Largest();
  Bytes best = largest_chunk ? Bytes(largest_chunk->size) : Bytes();
  best = std::max(best, Available());
  if (options_.garbage_collection) {
    const Bytes free_region_bytes = FreeRegionBytes();
    if (!free_region_bytes.is_zero()) {
      const Bytes after_gc = options_.memory_limit.SaturatingSub(pool_bytes_) + free_region_bytes;
      best = std::max(best, after_gc.RoundDown(allocator::kMinAllocationSize));
    }
  }
  return best;
}

}  // namespace hbmsim::allocator
