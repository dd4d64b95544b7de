// The allocation ladder and the three kinds of free (model in the header).
#include "allocator/cuda_async/cuda_async_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>

namespace hbmsim {
namespace {

uint64_t RoundUpTo(uint64_t v, uint64_t granule) { return Bytes(v).RoundUp(granule).value(); }

}  // namespace

CudaAsyncAllocator::CudaAsyncAllocator(const CudaAsyncOptions& options)
    : options_(options),
      // At most 64 PiB is backed, so VA ranges (granule multiples, reserved
      // upwards from 0) never run out of 64-bit addresses, even unlimited.
      physical_granules_(std::min(options.memory_limit.value(), kMaxPhysicalBytes) / options.granule),
      mapped_(options.granule) {
  options_.va_range = std::max(RoundUpTo(options_.va_range, options_.granule), options_.granule);
  stats_.bytes_limit = static_cast<int64_t>(std::min<uint64_t>(options_.memory_limit.value(), INT64_MAX));
  stats_.pool_bytes = 0;
  stats_.peak_pool_bytes = 0;
  if (options_.preallocate && physical_granules_ > 0) {
    // TF allocates and frees the whole pool once: one range, every granule mapped.
    const uint64_t base = ReserveRange(physical_granules_ * options_.granule);
    MapGranules(base, base + physical_granules_ * options_.granule);
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
  if (rounded_bytes == Bytes::Max() || want.rounded > capacity) {
    want.any_queued = options_.internal_dependencies;
    return Fail(want);
  }
  // 1. Freed memory this stream may use, mapping at most what the limit allows.
  if (std::optional<Placement> p = FindReuse(want)) return Place(*p, req, want.rounded);
  // 2. A new VA range with fresh physical memory.
  if (mapped_.GranulesTouching(0, want.rounded) <= physical_granules_ - mapped_.count()) {
    return Place(Placement{}, req, want.rounded);
  }
  // 3. Remap: give back cached granules so the buffer can be mapped elsewhere.
  uint64_t unmap = 0;
  if (std::optional<Placement> p = FindWithRemap(want, &unmap)) {
    const uint64_t keep_begin = p->block ? mapped_.Floor(p->begin) : 0;
    const uint64_t keep_end = p->block ? mapped_.Ceil(p->begin + want.rounded) : 0;
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

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindReuse(const Want& w) const {
  const uint64_t room = physical_granules_ - mapped_.count();
  std::optional<std::pair<uint64_t, uint64_t>> best;  // (size, address)
  for (auto it = free_index_.lower_bound({w.rounded, 0}); it != free_index_.end(); ++it) {
    if (NeedToMap(it->second, w.rounded) <= room) {
      best = *it;
      break;
    }
  }
  if (std::optional<Placement> q = FindQueued(w, /*other_streams=*/false)) {
    const uint64_t size = blocks_.at(*q->block).size;
    if (!best || std::make_pair(size, *q->block) < *best) best = std::make_pair(size, *q->block);
  }
  if (!best) return std::nullopt;
  return Placement{best->second, best->second};
}

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindWithRemap(const Want& w,
                                                                               uint64_t* unmap) const {
  const uint64_t held = HeldGranules();
  const uint64_t budget = physical_granules_ - held;
  for (auto it = free_index_.lower_bound({w.rounded, 0}); it != free_index_.end(); ++it) {
    if (RemapCost(it->second, w.rounded) <= budget) {
      *unmap = mapped_.count() + NeedToMap(it->second, w.rounded) - physical_granules_;
      return Placement{it->second, it->second};
    }
  }
  const uint64_t fresh = mapped_.GranulesTouching(0, w.rounded);
  if (fresh > budget) return std::nullopt;
  *unmap = mapped_.count() + fresh - physical_granules_;
  return Placement{};
}

std::optional<CudaAsyncAllocator::Placement> CudaAsyncAllocator::FindQueued(const Want& w,
                                                                            bool other_streams) const {
  std::optional<std::pair<uint64_t, uint64_t>> best;
  for (const auto& [stream, index] : queued_index_) {
    const bool own = w.stream.has_value() && *w.stream == stream;
    if (own == other_streams) continue;
    auto it = index.lower_bound({w.rounded, 0});
    if (it != index.end() && (!best || *it < *best)) best = *it;
  }
  if (!best) return std::nullopt;
  return Placement{best->second, best->second};
}

AllocResult CudaAsyncAllocator::Place(const Placement& p, const AllocRequest& req, uint64_t rounded) {
  const uint64_t address = p.block ? p.begin : ReserveRange(rounded);
  if (p.block) {
    const Block& b = blocks_.at(address);
    if (b.kind == Kind::kQueued && b.stream == req.stream.value()) ++same_stream_reuses_;
  }
  MapGranules(mapped_.Floor(address), mapped_.Ceil(address + rounded));
  Carve(address, rounded, req);
  NoteMapped();
  DropEmptyRanges();

  stats_.num_allocs++;
  stats_.bytes_in_use = static_cast<int64_t>(held_bytes_);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(rounded));
  AllocResult r;
  r.rounded = Bytes(rounded);
  r.handle = Handle(blocks_.at(address).handle);
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
    for (const auto& [size, address] : index) unusable -= size;
  }
  AllocResult r;
  r.rounded = Bytes(w.rounded);
  r.free_bytes = Bytes(physical_granules_ * options_.granule).SaturatingSub(Bytes(unusable));
  r.largest_free_block = Bytes(LargestRequest(w));
  r.status = ClassifyFailure(r.rounded, r.free_bytes);
  return r;
}

void CudaAsyncAllocator::Free(Handle h) {
  auto it = FindHandle(h);
  if (it == blocks_.end()) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle the cuda_async policy never issued");
    return;
  }
  handles_.erase(h.value());
  const uint64_t address = MakeFree(it);
  stats_.bytes_in_use = static_cast<int64_t>(held_bytes_);
  ReleaseAfterFree(address);
}

void CudaAsyncAllocator::RequestFree(Handle h) {
  auto it = FindHandle(h);
  if (it == blocks_.end() || it->second.kind != Kind::kInUse) return;
  // Still held (the device may use it), but its own stream may take it now.
  it->second.kind = Kind::kQueued;
  Index(it->first, it->second);
}

void CudaAsyncAllocator::CompleteFree(Handle h) {
  auto it = FindHandle(h);
  if (it == blocks_.end()) return;  // reused already: the driver waited for it
  if (it->second.kind == Kind::kInUse) return Free(h);
  if (!options_.opportunistic) {
    // Without opportunistic reuse only a synchronization would open it to
    // other streams, and a trace records none: it stays its stream's.
    it->second.completed = true;
    handles_.erase(h.value());
    it->second.handle = kNoHandle;
    return;
  }
  Free(h);
}

}  // namespace hbmsim
