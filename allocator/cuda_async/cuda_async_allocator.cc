// The allocation ladder and the three kinds of free (model in the header).
#include "allocator/cuda_async/cuda_async_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>

namespace hbmsim::allocator {
namespace {

uint64_t RoundUpTo(uint64_t v, uint64_t granule) { return Bytes(v).RoundUp(granule).value(); }

}  // namespace

CudaAsyncAllocator::CudaAsyncAllocator(const CudaAsyncOptions& options)
    : options_(options),
      // At most 64 PiB is backed, so VA ranges (granule multiples, reserved
      // upwards from 0) never run out of 64-bit addresses, even unlimited.
      physical_granules_(std::min(options.memory_limit.value(), kMaxPhysicalBytes) / options.granule),
      release_keep_(options.release_threshold / options.granule),
      mapped_(options.granule) {
  options_.va_range = std::max(RoundUpTo(options_.va_range, options_.granule), options_.granule);
  stats_.bytes_limit = static_cast<int64_t>(std::min<uint64_t>(options_.memory_limit.value(), INT64_MAX));
  stats_.pool_bytes = 0;
  stats_.peak_pool_bytes = 0;
  if (options_.preallocate && physical_granules_ > 0) {
    // TF allocates and frees the whole pool once: one range, every granule mapped.
    const uint32_t id = ReserveRange(physical_granules_ * options_.granule);
    const uint64_t base = blocks_[id].address;
    MapGranules(*blocks_[id].range, base, base + physical_granules_ * options_.granule);
    NoteMapped();
  }
}

AllocResult CudaAsyncAllocator::Allocate(const AllocRequest& req) {
  if (req.bytes.is_zero()) {
    AllocResult r;
    r.handle = kNullHandle;
    return r;
  }
  const Bytes rounded_bytes = req.bytes.RoundUp(options_.alignment);
  Want want{rounded_bytes.value(), req.stream.value(), false};
  const uint64_t capacity = physical_granules_ * options_.granule;
  const bool too_large = rounded_bytes == Bytes::Max() || want.rounded > capacity;
  PSays(!too_large, want.rounded / options_.granule + (want.rounded % options_.granule != 0 ? 1 : 0));
  if (too_large) {
    want.any_queued = options_.internal_dependencies;
    return Fail(want);
  }
  // 1. Freed memory this stream may use, mapping at most what the limit allows.
  if (std::optional<Placement> p = FindReuse(want)) return Place(*p, req, want.rounded);
  // 2. A new VA range with fresh physical memory.
  const uint64_t fresh = mapped_.GranulesTouching(0, want.rounded);
  const bool fits_fresh = fresh <= physical_granules_ - mapped_.count();
  PSays(fits_fresh, mapped_.count() + fresh);
  if (fits_fresh) return Place(Placement{}, req, want.rounded);
  // 3. Remap: give back cached granules so the buffer can be mapped elsewhere.
  uint64_t unmap = 0;
  if (std::optional<Placement> p = FindWithRemap(want, &unmap)) {
    uint64_t keep_begin = 0, keep_end = 0;
    if (p->block != kNone) {
      keep_begin = mapped_.Floor(blocks_[p->block].address);
      keep_end = mapped_.Ceil(blocks_[p->block].address + want.rounded);
    }
    OnlyThisP();  // how many granules go depends on P
    UnmapCached(unmap, keep_begin, keep_end);
    granules_remapped_ += static_cast<int64_t>(unmap);
    return Place(*p, req, want.rounded);
  }
  // 4. Memory whose free is still queued on another stream.
  if (options_.internal_dependencies) {
    if (std::optional<Placement> p = FindQueued(want, /*other_streams=*/true)) {
      ++internal_dependency_reuses_;
      return Place(*p, req, want.rounded);
    }
  }
  want.any_queued = options_.internal_dependencies;
  return Fail(want);
}

template <typename Fits>
std::optional<allocator::FreeEntry> CudaAsyncAllocator::TakeFree(uint64_t rounded, Fits fits) {
  std::optional<allocator::FreeEntry> e = free_index_.TakeBestFit(Bytes(rounded));
  if (!e || fits(*e)) return e;  // nearly always: the best fit needs no more than the limit allows
  std::vector<allocator::FreeEntry> passed{*e};
  while ((e = free_index_.TakeBestFit(Bytes(rounded))) && !fits(*e)) passed.push_back(*e);
  for (const allocator::FreeEntry& p : passed) PutBack(p);
  return e;
}

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindReuse(const Want& w) {
  const uint64_t room = physical_granules_ - mapped_.count();
  const std::optional<allocator::FreeEntry> free = TakeFree(w.rounded, [&](const allocator::FreeEntry& e) {
    const Range& r = *blocks_[e.handle].range;
    if (SurelyMapped(r, e.ptr, e.ptr + w.rounded)) return true;
    const uint64_t need = NeedToMap(r, e.ptr, w.rounded);
    PSays(need <= room, mapped_.count() + need);
    return need <= room;
  });
  // (Only stream-ordered frees queue blocks; most traces have none.)
  if (std::optional<Placement> q = queued_index_.empty() ? std::nullopt : FindQueued(w, /*other_streams=*/false)) {
    const Block& b = blocks_[q->block];
    if (!free || std::make_pair(b.size, b.address) < std::make_pair(free->size, free->ptr)) {
      if (free) PutBack(*free);
      return q;
    }
  }
  if (!free) return std::nullopt;
  return Placement{static_cast<uint32_t>(free->handle), /*taken=*/true};
}

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindWithRemap(const Want& w,
                                                                               uint64_t* unmap) {
  const uint64_t budget = physical_granules_ - HeldGranules();
  const std::optional<allocator::FreeEntry> free = TakeFree(w.rounded, [&](const allocator::FreeEntry& e) {
    const uint64_t cost = RemapCost(blocks_[e.handle], w.rounded);
    PSays(cost <= budget, HeldGranules() + cost);
    return cost <= budget;
  });
  if (free) {
    const Block& b = blocks_[free->handle];
    *unmap = mapped_.count() + NeedToMap(*b.range, b.address, w.rounded) - physical_granules_;
    return Placement{static_cast<uint32_t>(free->handle), /*taken=*/true};
  }
  const uint64_t fresh = mapped_.GranulesTouching(0, w.rounded);
  PSays(fresh <= budget, HeldGranules() + fresh);
  if (fresh > budget) return std::nullopt;
  *unmap = mapped_.count() + fresh - physical_granules_;
  return Placement{};
}

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindQueued(const Want& w,
                                                                            bool other_streams) const {
  if (queued_index_.empty()) return std::nullopt;  // only stream-ordered frees queue blocks
  const QueuedKey* best = nullptr;
  for (const auto& [stream, index] : queued_index_) {
    const bool own = w.stream.has_value() && *w.stream == stream;
    if (own == other_streams) continue;
    auto it = index.lower_bound({w.rounded, 0, 0});
    if (it != index.end() && (best == nullptr || *it < *best)) best = &*it;
  }
  if (best == nullptr) return std::nullopt;
  return Placement{best->block, /*taken=*/false};
}

AllocResult CudaAsyncAllocator::Place(const Placement& p, const AllocRequest& req, uint64_t rounded) {
  const uint32_t id = p.block != kNone ? p.block : ReserveRange(rounded);
  Block& b = blocks_[id];
  if (b.kind == Kind::kQueued && b.stream == req.stream.value()) ++same_stream_reuses_;
  const uint64_t address = b.address;
  if (!SurelyMapped(*b.range, address, address + rounded)) {
    MapGranules(*b.range, mapped_.Floor(address), mapped_.Ceil(address + rounded));
  }
  Carve(id, rounded, req, /*indexed=*/!p.taken);
  NoteMapped();
  if (unmapped_since_drop_) DropEmptyRanges();

  stats_.num_allocs++;
  stats_.bytes_in_use = static_cast<int64_t>(held_bytes_);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(rounded));
  AllocResult r;
  r.rounded = Bytes(rounded);
  r.handle = Handle(blocks_[id].handle);
  r.has_offset = true;
  r.offset = Offset(address);
  r.size = Bytes(rounded);
  return r;
}

AllocResult CudaAsyncAllocator::Fail(const Want& w) const {
  uint64_t unusable = held_bytes_;  // in use, and queued blocks this request may not take
  for (const auto& [stream, index] : queued_index_) {
    const bool usable = w.any_queued || (w.stream.has_value() && *w.stream == stream);
    if (!usable) continue;
    for (const QueuedKey& k : index) unusable -= k.size;
  }
  AllocResult r;
  r.rounded = Bytes(w.rounded);
  r.free_bytes = Bytes(physical_granules_ * options_.granule).SaturatingSub(Bytes(unusable));
  r.largest_free_block = Bytes(LargestRequest(w));
  r.status = ClassifyFailure(r.rounded, r.free_bytes);
  return r;
}

void CudaAsyncAllocator::Free(Handle h) {
  const uint32_t* found = handles_.Find(h.value());  // kNullHandle finds nothing
  if (found == nullptr) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle the cuda_async policy never issued");
    return;
  }
  const uint32_t id = *found;
  handles_.Erase(h.value());
  const uint32_t merged = MakeFree(id);
  stats_.bytes_in_use = static_cast<int64_t>(held_bytes_);
  if (mapped_.count() > release_keep_) ReleaseAfterFree(merged);  // TF's threshold: never
}

void CudaAsyncAllocator::RequestFree(Handle h) {
  const uint32_t* found = handles_.Find(h.value());
  if (found == nullptr || blocks_[*found].kind != Kind::kInUse) return;
  // Still held (the device may use it), but its own stream may take it now.
  blocks_[*found].kind = Kind::kQueued;
  Index(*found);
}

void CudaAsyncAllocator::CompleteFree(Handle h) {
  const uint32_t* found = handles_.Find(h.value());
  if (found == nullptr) return;  // reused already: the driver waited for it
  Block& b = blocks_[*found];
  if (b.kind == Kind::kInUse) return Free(h);
  if (!options_.opportunistic) {
    // Without opportunistic reuse only a synchronization would open it to
    // other streams, and a trace records none: it stays its stream's.
    b.completed = true;
    b.handle = kNoHandle;
    handles_.Erase(h.value());
    return;
  }
  Free(h);
}

}  // namespace hbmsim::allocator
