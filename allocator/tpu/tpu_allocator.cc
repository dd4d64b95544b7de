// The buffer side of the `tpu` policy: placement and the recovery ladder.
#include "allocator/tpu/tpu_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>

#include "allocator/tpu/tpu_padding.h"
#include "fmt/format.h"

namespace hbmsim {

namespace {

TpuOptions Normalized(TpuOptions o) {
  if (o.granule.is_zero()) o.granule = Bytes(1);
  // Whole granules only, so every offset stays a multiple of the granule.
  o.hbm_bytes = o.hbm_bytes.RoundDown(o.granule.value());
  return o;
}

}  // namespace

TpuAllocator::TpuAllocator(const TpuOptions& options)
    : options_(Normalized(options)), layout_(options_.hbm_bytes) {}

AllocResult TpuAllocator::Allocate(const AllocRequest& req) {
  const Bytes size = TpuBufferBytes(req.bytes, req.shape, options_.tile_padding, options_.granule);
  if (size.is_zero()) {
    AllocResult empty;
    empty.handle = kNullHandle;
    return empty;
  }
  const uint64_t handle = next_handle_;
  // The ladder: each rung runs only when every earlier one left the request unplaced.
  std::optional<HbmLayout::Ref> at = TryPlace(size, handle);
  if (!at && options_.queued_free_retry && CompleteQueuedFrees()) at = TryPlace(size, handle);
  if (!at && options_.defragment && CompactIfItMayHelp(size)) at = TryPlace(size, handle);
  if (!at && options_.evict_programs) at = EvictProgramsUntilFits(size, handle);
  if (!at) return Fail(req, size);
  return Succeed(req, handle, *at, size);
}

std::optional<HbmLayout::Ref> TpuAllocator::TryPlace(Bytes size, uint64_t handle) {
  return layout_.PlaceBestFitTop(size, BlockState::kInUse, handle);
}

// Rung 1: as if the runtime waited for the device to finish every queued free.
bool TpuAllocator::CompleteQueuedFrees() {
  if (queued_.empty()) return false;
  const int64_t count = static_cast<int64_t>(queued_.size());
  const Bytes bytes = queued_bytes_;
  while (!queued_.empty()) ReleaseBuffer(*queued_.begin());
  ++counters_.queued_free_waits;
  counters_.queued_frees_completed += count;
  Notify({PolicyEventKind::kQueuedFreeWait, bytes, Offset(0), static_cast<uint64_t>(count)});
  return true;
}

// Rung 2 runs only on a fragmentation failure: the request fits in the total.
bool TpuAllocator::CompactIfItMayHelp(Bytes size) {
  if (size > layout_.free_bytes()) return false;
  return Defragment() > 0;
}

int64_t TpuAllocator::Defragment() {
  // In-use buffers slide up; programs and queued frees (the device may still
  // read them) stay where they are. Buffers keep their Refs: no buffer record
  // changes, whatever moves.
  const HbmLayout::Compaction done = layout_.Compact();
  if (done.blocks_moved == 0) return 0;
  ++counters_.defragmentations;
  counters_.buffers_moved += done.blocks_moved;
  counters_.bytes_moved += static_cast<int64_t>(done.bytes_moved);
  Notify({PolicyEventKind::kDefragmentation, Bytes(done.bytes_moved), Offset(0),
          static_cast<uint64_t>(done.blocks_moved)});
  return done.blocks_moved;
}

// Rung 3: buffers have priority over loaded programs.
std::optional<HbmLayout::Ref> TpuAllocator::EvictProgramsUntilFits(Bytes size, uint64_t handle) {
  while (std::optional<ProgramId> victim = NextEvictionVictim(std::nullopt)) {
    Evict(*victim);
    if (std::optional<HbmLayout::Ref> at = TryPlace(size, handle)) return at;
    const Reach compact_only{.complete_queued_frees = false, .evict_programs = false, .compact = true};
    if (options_.defragment && LargestReachable(compact_only) >= size) {
      Defragment();
      return TryPlace(size, handle);
    }
  }
  return std::nullopt;
}

AllocResult TpuAllocator::Succeed(const AllocRequest& req, uint64_t handle, HbmLayout::Ref block,
                                  Bytes size) {
  ++next_handle_;
  buffers_.emplace(handle, Buffer{req.id, req.stream, block, size, req.bytes, false});
  if (req.shape != nullptr) shapes_.emplace(handle, *req.shape);
  const Offset offset(layout_.block(block).offset);
  const Bytes padding = size.SaturatingSub(req.bytes);
  padding_in_use_ += padding;
  counters_.padding_bytes += static_cast<int64_t>(padding.value());
  ++num_allocs_;
  in_use_ += size;
  peak_in_use_ = std::max(peak_in_use_, in_use_);
  largest_alloc_ = std::max(largest_alloc_, size);
  AllocResult r;
  r.handle = Handle(handle);
  r.has_offset = true;
  r.offset = offset;
  r.size = size;
  r.rounded = size;
  return r;
}

AllocResult TpuAllocator::Fail(const AllocRequest& req, Bytes size) {
  AllocResult r;
  r.free_bytes = FreeAfterLadder();
  r.status = ClassifyFailure(size, r.free_bytes);
  r.rounded = size;
  r.largest_free_block = LargestRequestNow();
  RecordSnapshot(req.event, /*program_load=*/false, req.id.value(), size);
  return r;
}

void TpuAllocator::ReleaseBuffer(uint64_t handle) { ReleaseBuffer(buffers_.find(handle)); }

void TpuAllocator::ReleaseBuffer(absl::flat_hash_map<uint64_t, Buffer>::iterator it) {
  const uint64_t handle = it->first;
  const Buffer& b = it->second;
  layout_.Release(b.block);
  if (!shapes_.empty()) shapes_.erase(handle);
  in_use_ -= b.size;
  padding_in_use_ -= b.size.SaturatingSub(b.requested);
  if (b.queued_free) {
    queued_.erase(handle);
    queued_bytes_ -= b.size;
  }
  buffers_.erase(it);
}

void TpuAllocator::Free(Handle h) {
  auto it = buffers_.find(h.value());
  if (it != buffers_.end()) {
    ReleaseBuffer(it);
    return;
  }
  HBMSIM_DCHECK(h == kNullHandle, "free of a handle the tpu policy never issued");
}

void TpuAllocator::RequestFree(Handle h) {
  auto it = buffers_.find(h.value());
  if (it == buffers_.end() || it->second.queued_free) return;
  it->second.queued_free = true;
  layout_.SetState(it->second.block, BlockState::kPendingFree);
  queued_.insert(h.value());
  queued_bytes_ += it->second.size;
}

// Handles are never reused, so an unknown handle here is one the ladder has
// already completed (or kNullHandle): nothing to do.
// A queued free the allocator already drained under pressure is gone: a no-op,
// where Free of a handle never issued is the caller's bug.
void TpuAllocator::CompleteFree(Handle h) {
  if (!buffers_.contains(h.value())) return;
  Free(h);
}

}  // namespace hbmsim
