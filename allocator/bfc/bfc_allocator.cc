// The allocation ladder, splitting, freeing and coalescing (REF §1.3-§1.5).
#include "allocator/bfc/bfc_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <limits>

namespace hbmsim::allocator {

using bfc::ChunkHandle;
using bfc::kInvalidChunk;


namespace {

constexpr Bytes kDefaultMaxInternalFragmentation = Bytes::MiB(128);

}  // namespace

BfcAllocator::BfcAllocator(const BfcOptions& options) : options_(options) {
  // REF: growth starts with 2 MiB regions (first_region; older builds 1 MiB);
  // otherwise the first Extend takes the whole limit.
  const Bytes first_region =
      options_.allow_growth ? std::min(options_.memory_limit, std::max(options_.first_region, Bytes(1)))
                            : options_.memory_limit;  // a first region of 0 would never double
  curr_region_allocation_bytes_ = first_region.RoundUp(kGranule);
  stats_.bytes_limit = StatBytes(options_.memory_limit);
  stats_.pool_bytes = 0;
  stats_.peak_pool_bytes = 0;
  max_internal_fragmentation_ = ComputeMaxInternalFragmentation();
  window_.Only(options_.memory_limit);
}

bool BfcAllocator::TrackLimitWindow() {
  HBMSIM_DCHECK(regions_.empty(), "TrackLimitWindow after the first event");
  // Garbage collection without growth never releases anything (GarbageCollect):
  // its runs are windowed as plain ones; with growth, until a collection runs.
  if (options_.device_capacity || options_.fragmentation_fraction > 0) {
    return false;
  }
  windows_ = true;
  window_ = LimitWindows{};
  if (options_.allow_growth) {
    // Growth starts at min(limit, first_region): the same for every limit of
    // first_region and more. Below, the first region is the limit's, which
    // CloneAt does not recompute for a growing pool: such a run keeps its limit alone.
    if (options_.memory_limit >= options_.first_region) {
      window_.AtLeast(options_.first_region);
    } else {
      window_.Only(options_.memory_limit);
    }
  }
  return true;
}

std::unique_ptr<Allocator> BfcAllocator::CloneAt(Bytes limit) const {
  return std::unique_ptr<Allocator>(new BfcAllocator(*this, limit));
}

// Everything is copied; what the limit sizes is recomputed for `limit`: the
// memory it cut (the pool is floor256(limit)), so the last region, the
// tail's length, the device's next address, and without growth Extend's curr
// (ceil256(limit), doubled after the first Extend). The bins are
// filed afresh from the chunks: their order is (size, address) whatever the
// blocks, so every later best fit is the same.
BfcAllocator::BfcAllocator(const BfcAllocator& from, Bytes limit)
    : options_(from.options_),
      device_(from.device_),
      chunks_(from.chunks_),
      regions_(from.regions_),
      max_internal_fragmentation_(from.max_internal_fragmentation_),
      curr_region_allocation_bytes_(from.curr_region_allocation_bytes_),
      pool_bytes_(from.pool_bytes_),
      next_allocation_id_(from.next_allocation_id_),
      stats_(from.stats_),
      live_chunks_(from.live_chunks_),
      extends_(from.extends_),
      region_extensions_(from.region_extensions_),
      garbage_collections_(from.garbage_collections_),
      regions_released_(from.regions_released_),
      started_backpedal_(from.started_backpedal_),
      device_alloc_failures_(from.device_alloc_failures_),
      windows_(from.windows_),
      window_pinned_(from.window_pinned_),
      window_(from.window_),
      last_(from.last_),
      limit_origin_(from.limit_origin_),
      peak_fixed_(from.peak_fixed_),
      largest_fixed_(from.largest_fixed_),
      peak_rel_(from.peak_rel_),
      largest_rel_(from.largest_rel_) {
  HBMSIM_DCHECK(window_.Contains(limit), "CloneAt a limit outside the window");
  if (limit != options_.memory_limit) {
    options_.memory_limit = limit;
    stats_.bytes_limit = StatBytes(limit);
    if (!options_.allow_growth) {  // growth's curr is the same for every limit of the window
      curr_region_allocation_bytes_ = limit.RoundUp(kGranule);
      if (extends_ > 0) curr_region_allocation_bytes_ += curr_region_allocation_bytes_;
    }
    if (last_ != kInvalidChunk) {
      // The memory the limit sized ends the last region (the device's ranges
      // ascend): the pool is floor256(limit), the tail and its region follow.
      Region& r = regions_.back();
      const Bytes pool = limit.RoundDown(kGranule);
      const auto delta = static_cast<int64_t>(pool.value() - pool_bytes_.value());  // two's complement
      bfc::Chunk& last = chunks_.at(last_);
      last.size += static_cast<uint64_t>(delta);
      r.size = Bytes(r.size.value() + static_cast<uint64_t>(delta));
      if (last.in_use()) stats_.bytes_in_use += delta;
      const auto floor = static_cast<int64_t>(pool.value());
      stats_.peak_bytes_in_use = std::max(peak_fixed_, peak_rel_ ? floor + *peak_rel_ : 0);
      stats_.largest_alloc_size = std::max(largest_fixed_, largest_rel_ ? floor + *largest_rel_ : 0);
      pool_bytes_ = pool;
      stats_.pool_bytes = StatBytes(pool);
      stats_.peak_pool_bytes = StatBytes(pool);  // without garbage collection the pool only grows
      device_ = SimulatedDevice();
      device_.Reserve(Bytes((r.base + r.size).value()));
    }
  }
  for (const Region& r : regions_) {
    for (ChunkHandle h = r.first; h != kInvalidChunk; h = chunks_.at(h).next) {
      if (!chunks_.at(h).in_use()) InsertIntoBin(h);
    }
  }
}

// floor256(limit) - off ∈ [a, b], off the tail's offset in the region.
void BfcAllocator::TailWithin(Bytes a, Bytes b) {
  const Bytes off(chunks_.at(last_).ptr - limit_origin_);  // wraps as the origin does
  window_.AtLeast((off + a).RoundUp(kGranule));
  if (b != Bytes::Max()) window_.AtMost((off + b).RoundDown(kGranule) + Bytes(kGranule - 1));
}

// A best fit just took `fit` (or nothing): which limits would have taken the same?
void BfcAllocator::NoteFit(Bytes rounded, const std::optional<allocator::FreeEntry>& fit) {
  const bfc::Chunk& last = chunks_.at(last_);
  if (last.in_use()) return;  // no free tail: nothing here depends on the limit
  const Bytes tail(last.size);
  if (fit && fit->handle == last_) {
    // The tail won: it fits, and it is shorter than every other chunk that fits
    // (one as long lies below it, so would win).
    // The tail is out of the bins now: the best fit of the rest, looked up in place.
    Bytes longest = Bytes::Max();
    if (const std::optional<allocator::FreeEntry> other = bins_.LowerBound(rounded.value(), 0)) {
      longest = Bytes(other->size - 1);
    }
    TailWithin(rounded, longest);
    const Bytes split_at = rounded + std::min(rounded, max_internal_fragmentation_);
    if (tail >= split_at) {
      TailWithin(split_at, Bytes::Max());
    } else {
      TailWithin(Bytes(0), split_at - Bytes(1));  // handed out whole
    }
  } else if (tail < rounded) {
    TailWithin(Bytes(0), rounded - Bytes(1));
  } else {
    TailWithin(Bytes(fit->size), Bytes::Max());  // fit, at a lower address, is not longer
  }
  HBMSIM_DCHECK(window_.Contains(options_.memory_limit), "the limit left its window");
}

// REF recomputes this on every find; the options never change, so once is the same.
Bytes BfcAllocator::ComputeMaxInternalFragmentation() const {
  if (options_.fragmentation_fraction <= 0) return kDefaultMaxInternalFragmentation;
  // REF truncates the double product to int64.
  const double product = options_.fragmentation_fraction * static_cast<double>(options_.memory_limit.value());
  constexpr double kInt64Max = static_cast<double>(std::numeric_limits<int64_t>::max());
  return Bytes(product >= kInt64Max ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(product));
}

// REF's AllocateRawInternal. A single-threaded replay makes TF's retry loop
// (AllocatorRetry, §1.9: up to ~4 attempts over 10 s) unobservable, so one
// attempt is exact:
// * with a device that never refuses, a failed attempt changed nothing:
//   Extend failed at its first check (rounded > available; any Extend past it
//   succeeds, and so does the find after it), and GC declined (had it released
//   regions, rounded <= floor256(limit - pool) afterwards, so the following
//   Extend would have succeeded). A retry sees the same state and fails again.
// * with device_capacity, the first failed attempt may double curr, spend the
//   one backpedal or release regions, but it leaves a fixed point: curr
//   already covers the request, GC finds no free region left, and Extend asks
//   the device the same sizes again. Only TF's log lines of refused sizes
//   repeat per attempt; device_alloc_failures counts one attempt's.
AllocResult BfcAllocator::Allocate(const AllocRequest& req) {
  if (req.bytes.is_zero()) {
    // REF returns nullptr at once; nothing changes.
    AllocResult zero;
    zero.handle = kNullHandle;
    return zero;
  }
  const Bytes rounded = req.bytes.RoundUp(kGranule);
  std::optional<ChunkHandle> h = FindChunk(rounded, req);
  if (!h && Extend(rounded, req)) h = FindChunk(rounded, req);
  if (!h && GarbageCollect(rounded) && Extend(rounded, req)) h = FindChunk(rounded, req);
  if (!h) return Fail(rounded);

  const bfc::Chunk& c = chunks_.at(*h);
  AllocResult r;
  r.handle = Handle(*h);
  r.has_offset = true;
  r.offset = Offset(c.ptr);
  r.size = Bytes(c.size);
  r.rounded = rounded;
  return r;
}

AllocResult BfcAllocator::Fail(Bytes rounded) const {
  AllocResult r;
  r.handle = kNullHandle;  // so a stray Free of a failed request is a no-op
  r.rounded = rounded;
  // Free memory counts what the pool holds unused and what Extend could still
  // obtain below the limit (and from the device, when its capacity is set).
  r.free_bytes = (pool_bytes_ - Bytes(static_cast<uint64_t>(stats_.bytes_in_use))) + Obtainable();
  r.largest_free_block = LargestRequest();
  r.status = ClassifyFailure(rounded, r.free_bytes);
  return r;
}

// REF's FindChunkPtr: best fit, maybe split, mark in use.
std::optional<ChunkHandle> BfcAllocator::FindChunk(Bytes rounded, const AllocRequest& req) {
  const std::optional<allocator::FreeEntry> fit = bins_.TakeBestFit(rounded);
  if (windows_ && last_ != kInvalidChunk) NoteFit(rounded, fit);
  if (!fit) return std::nullopt;
  const ChunkHandle h = fit->handle;
  chunks_.at(h).bin_num = bfc::kNotBinned;
  const Bytes size(chunks_.at(h).size);
  const Bytes remainder = size - rounded;
  // The `remainder > 0` guard only matters when fraction·limit truncates to 0:
  // REF would then split off an empty chunk, which we refuse to model.
  if (size >= rounded + rounded || (remainder >= max_internal_fragmentation_ && !remainder.is_zero())) {
    SplitChunk(h, rounded);
  }
  MarkInUse(h, req);
  return h;
}

// TF's ClearStats. With windows the peak splits as MarkInUse keeps it: into
// what the limit sizes (the tail in use) and what it does not.
void BfcAllocator::ClearStats() {
  stats_.Clear();
  if (!windows_) return;
  largest_fixed_ = 0;
  largest_rel_.reset();
  if (last_ != kInvalidChunk && chunks_.at(last_).in_use()) {
    peak_fixed_ = 0;
    peak_rel_ = stats_.bytes_in_use - static_cast<int64_t>(pool_bytes_.value());
  } else {
    peak_fixed_ = stats_.bytes_in_use;
    peak_rel_.reset();
  }
}

void BfcAllocator::MarkInUse(ChunkHandle h, const AllocRequest& req) {
  bfc::Chunk& c = chunks_.at(h);
  c.requested_size = req.bytes.value();
  c.allocation_id = next_allocation_id_++;
  c.buffer_id = req.id.value();
  c.stream = req.stream.value();
  ++live_chunks_;
  const auto size = static_cast<int64_t>(c.size);
  ++stats_.num_allocs;
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, size);
  if (windows_) {
    // Split the peaks into what the limit sizes (the tail in use) and what it
    // does not (everything, before the limit sized any memory).
    const auto floor = static_cast<int64_t>(pool_bytes_.value());
    if (last_ != kInvalidChunk && chunks_.at(last_).in_use()) {
      peak_rel_ = std::max(peak_rel_.value_or(std::numeric_limits<int64_t>::min()), stats_.bytes_in_use - floor);
    } else {
      peak_fixed_ = std::max(peak_fixed_, stats_.bytes_in_use);
    }
    if (h == last_) {
      largest_rel_ = std::max(largest_rel_.value_or(std::numeric_limits<int64_t>::min()), size - floor);
    } else {
      largest_fixed_ = std::max(largest_fixed_, size);
    }
  }
}

// The low `rounded` bytes stay with h; the rest becomes a new free chunk,
// binned without coalescing (its right neighbour is never free).
void BfcAllocator::SplitChunk(ChunkHandle h, Bytes rounded) {
  const ChunkHandle rest = chunks_.Allocate();  // first, as REF (it may grow the vector)
  bfc::Chunk& c = chunks_.at(h);
  bfc::Chunk& r = chunks_.at(rest);
  r.ptr = c.ptr + rounded.value();
  r.size = c.size - rounded.value();
  c.size = rounded.value();
  r.prev = h;
  r.next = c.next;
  c.next = rest;
  if (r.next != kInvalidChunk) chunks_.at(r.next).prev = rest;
  if (h == last_) last_ = rest;
  InsertIntoBin(rest);
}

void BfcAllocator::Free(Handle handle) {
  if (handle == kNullHandle) return;  // a zero-byte request reserved nothing
  const ChunkHandle h = handle.value();
  // Freeing something that is not a live chunk is the engine's bug; ignore it
  // rather than corrupt the map (REF would crash).
  if (h >= chunks_.records() || !chunks_.at(h).in_use()) {
    // kNullHandle (a zero-byte request) is a valid free; anything else is the caller's bug.
    HBMSIM_DCHECK(handle == kNullHandle, "free of a handle that is not a live bfc chunk");
    return;
  }
  bfc::Chunk& c = chunks_.at(h);
  c.allocation_id = -1;
  --live_chunks_;
  stats_.bytes_in_use -= static_cast<int64_t>(c.size);
  InsertIntoBin(Coalesce(h));
}

// REF's TryToCoalesce without timestamps: next into h, then h into prev.
ChunkHandle BfcAllocator::Coalesce(ChunkHandle h) {
  const ChunkHandle next = chunks_.at(h).next;
  if (next != kInvalidChunk && !chunks_.at(next).in_use()) {
    RemoveFromBin(next);
    Merge(h, next);
  }
  const ChunkHandle prev = chunks_.at(h).prev;
  if (prev != kInvalidChunk && !chunks_.at(prev).in_use()) {
    RemoveFromBin(prev);
    Merge(prev, h);
    return prev;
  }
  return h;
}

// `right` is absorbed into `left` and its handle released.
void BfcAllocator::Merge(ChunkHandle left, ChunkHandle right) {
  bfc::Chunk& l = chunks_.at(left);
  const bfc::Chunk& r = chunks_.at(right);
  l.size += r.size;
  l.next = r.next;
  if (l.next != kInvalidChunk) chunks_.at(l.next).prev = left;
  if (right == last_) last_ = left;
  chunks_.Release(right);
}

void BfcAllocator::InsertIntoBin(ChunkHandle h) {
  bfc::Chunk& c = chunks_.at(h);
  c.bin_num = allocator::BinNumForSize(Bytes(c.size));
  bins_.Insert(c.bin_num, allocator::FreeEntry{c.size, c.ptr, h});
}

void BfcAllocator::RemoveFromBin(ChunkHandle h) {
  bfc::Chunk& c = chunks_.at(h);
  bins_.Remove(c.bin_num, c.size, c.ptr);
  c.bin_num = bfc::kNotBinned;
}

}  // namespace hbmsim::allocator
