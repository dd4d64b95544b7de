// The buffer side of the `tpu` policy: placement and the recovery ladder.
#include "allocator/tpu/tpu_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>

#include "allocator/tpu/tpu_padding.h"
#include "fmt/format.h"

namespace hbmsim::allocator {

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
  // The ladder: each rung runs only when every earlier one left the request unplaced.
  std::optional<HbmLayout::Ref> at = TryPlace(size);
  if (!at && options_.queued_free_retry && CompleteQueuedFrees()) at = TryPlace(size);
  if (!at && options_.defragment && CompactIfItMayHelp(size)) at = TryPlace(size);
  if (!at && options_.evict_programs) at = EvictProgramsUntilFits(size);
  if (!at) return Fail(req, size);
  return Succeed(req, *at, size);
}

// The owner (the handle) is set by Succeed: the handle carries the block's Ref.
std::optional<HbmLayout::Ref> TpuAllocator::TryPlace(Bytes size) {
  return layout_.PlaceBestFitTop(size, BlockState::kInUse, /*owner=*/0);
}

// Rung 1: as if the runtime waited for the device to finish every queued free.
bool TpuAllocator::CompleteQueuedFrees() {
  if (queued_.empty()) return false;
  const int64_t count = static_cast<int64_t>(queued_.size());
  const Bytes bytes = queued_bytes_;
  while (!queued_.empty()) ReleaseBuffer(RefOf(*queued_.begin()));
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
std::optional<HbmLayout::Ref> TpuAllocator::EvictProgramsUntilFits(Bytes size) {
  while (std::optional<ProgramId> victim = NextEvictionVictim(std::nullopt)) {
    Evict(*victim);
    if (std::optional<HbmLayout::Ref> at = TryPlace(size)) return at;
    const Reach compact_only{.complete_queued_frees = false, .evict_programs = false, .compact = true};
    if (options_.defragment && LargestReachable(compact_only) >= size) {
      Defragment();
      return TryPlace(size);
    }
  }
  return std::nullopt;
}

AllocResult TpuAllocator::Succeed(const AllocRequest& req, HbmLayout::Ref block, Bytes size) {
  const uint64_t handle = HandleFor(next_serial_++, block);
  layout_.SetOwner(block, handle);
  if (block >= buffers_.size()) buffers_.resize(std::max<size_t>(2 * buffers_.size(), block + 1));
  buffers_[block] = Buffer{handle, req.id, req.stream, req.bytes};
  ++live_buffers_;
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

void TpuAllocator::ReleaseBuffer(HbmLayout::Ref block) {
  Buffer& b = buffers_[block];
  const Bytes size = layout_.block(block).size;
  if (!shapes_.empty()) shapes_.erase(b.handle);
  in_use_ -= size;
  padding_in_use_ -= size.SaturatingSub(b.requested);
  if (layout_.block(block).state == BlockState::kPendingFree) {
    queued_.erase(b.handle);
    queued_bytes_ -= size;
  }
  b.handle = kVacant;
  --live_buffers_;
  layout_.Release(block);
}

void TpuAllocator::Free(Handle h) {
  if (const HbmLayout::Ref r = Find(h); r != HbmLayout::kNone) {
    ReleaseBuffer(r);
    return;
  }
  HBMSIM_DCHECK(h == kNullHandle, "free of a handle the tpu policy never issued");
}

void TpuAllocator::RequestFree(Handle h) {
  const HbmLayout::Ref r = Find(h);
  if (r == HbmLayout::kNone || layout_.block(r).state == BlockState::kPendingFree) return;
  layout_.SetState(r, BlockState::kPendingFree);
  queued_.insert(h.value());
  queued_bytes_ += layout_.block(r).size;
}

// Handles are never reused, so an unknown handle here is one the ladder has
// already completed (or kNullHandle): nothing to do.
// A queued free the allocator already drained under pressure is gone: a no-op,
// where Free of a handle never issued is the caller's bug.
void TpuAllocator::CompleteFree(Handle h) {
  if (Find(h) == HbmLayout::kNone) return;
  Free(h);
}

}  // namespace hbmsim::allocator
