// The allocation ladder, splitting, freeing and coalescing (REF §1.3-§1.5).
#include "allocator/bfc/bfc_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <limits>

namespace hbmsim {

using bfc::ChunkHandle;
using bfc::kInvalidChunk;

namespace {

constexpr uint64_t kGranule = bfc::kMinAllocationSize;
constexpr Bytes kTwoMiB = Bytes::MiB(2);
constexpr Bytes kDefaultMaxInternalFragmentation = Bytes::MiB(128);

}  // namespace

BfcAllocator::BfcAllocator(const BfcOptions& options) : options_(options) {
  // REF (since TF 2.7): growth starts with 2 MiB regions; otherwise the first
  // Extend takes the whole limit.
  const Bytes first_region =
      options_.allow_growth ? std::min(options_.memory_limit, kTwoMiB) : options_.memory_limit;
  curr_region_allocation_bytes_ = first_region.RoundUp(kGranule);
  stats_.bytes_limit = StatBytes(options_.memory_limit);
  stats_.pool_bytes = 0;
  stats_.peak_pool_bytes = 0;
  max_internal_fragmentation_ = ComputeMaxInternalFragmentation();
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
  const std::optional<bfc::FreeEntry> fit = bins_.TakeBestFit(rounded);
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
  chunks_.Release(right);
}

void BfcAllocator::InsertIntoBin(ChunkHandle h) {
  bfc::Chunk& c = chunks_.at(h);
  c.bin_num = bfc::BinNumForSize(Bytes(c.size));
  bins_.Insert(c.bin_num, bfc::FreeEntry{c.size, c.ptr, h});
}

void BfcAllocator::RemoveFromBin(ChunkHandle h) {
  bfc::Chunk& c = chunks_.at(h);
  bins_.Remove(c.bin_num, c.size, c.ptr);
  c.bin_num = bfc::kNotBinned;
}

}  // namespace hbmsim
