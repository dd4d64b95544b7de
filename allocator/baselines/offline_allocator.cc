#include "allocator/baselines/offline_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::allocator {

OfflineAllocator::OfflineAllocator(std::shared_ptr<const OfflinePlan> plan, Bytes memory_limit)
    : FixedPoolAllocator(memory_limit), plan_(std::move(plan)), limit_(memory_limit) {}

AllocResult OfflineAllocator::Allocate(const AllocRequest& req) {
  AllocResult r;
  if (req.bytes.is_zero()) {
    r.handle = kNullHandle;
    return r;
  }
  const PlacedBuffer* p = plan_->Find(req.event.value());
  if (p == nullptr || p->size < req.bytes.value()) {
    r.status = AllocStatus::kOom;  // not this plan's trace: refuse rather than guess
    r.rounded = req.bytes;
    return r;
  }
  r.rounded = Bytes(p->size);
  // `size > limit - offset`: the sum saturates near 2^64 and would pass. A size
  // of Bytes::Max() is a saturated one, which no limit holds (units.h).
  if (Bytes(p->size) > limit_.SaturatingSub(Bytes(p->offset)) || r.rounded == Bytes::Max()) {
    r.free_bytes = limit_ - Bytes(static_cast<uint64_t>(stats_.bytes_in_use));
    r.largest_free_block = Bytes(LargestGap());
    r.status = r.rounded == Bytes::Max() ? AllocStatus::kOom : ClassifyFailure(r.rounded, r.free_bytes);
    return r;
  }
  live_.emplace(p->offset, Block{p->size, req.bytes.value(), req.id.value(), req.stream.value()});
  CountPlaced(p->size);
  SetPlaced(r, p->offset, p->offset, r.rounded);
  return r;
}

void OfflineAllocator::Free(Handle h) {
  ForgetLive(live_, h, "free of a handle the offline policy never issued");
}

uint64_t OfflineAllocator::LargestGap() const {
  uint64_t cursor = 0;
  uint64_t largest = 0;
  for (const auto& [offset, block] : live_) {
    largest = std::max(largest, offset - cursor);
    cursor = offset + block.size;
  }
  return std::max(largest, limit_.value() - cursor);
}

AllocatorStats OfflineAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes = StatBytes(Bytes(LargestGap()));
  return s;
}

void OfflineAllocator::AppendCounters(Counters& out) const {
  out.push_back({"planned_heap_bytes", static_cast<int64_t>(plan_->heap_size)});
  out.push_back({"spatial_heap_bytes", static_cast<int64_t>(plan_->spatial_heap_size)});
  out.push_back({"temporal_heap_bytes", static_cast<int64_t>(plan_->temporal_heap_size)});
}

void OfflineAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  if (limit_.is_zero()) return;
  v.OnRegion({Offset(0), limit_, 0});
  uint64_t cursor = 0;
  for (const auto& [offset, block] : live_) {
    if (offset > cursor) {
      v.OnBlock(FreeBlock(cursor, offset - cursor));
    }
    v.OnBlock({Offset(offset), Bytes(block.size), Bytes(block.requested), BlockState::kInUse, offset,
               kNoHandle, block.id, block.stream});
    cursor = offset + block.size;
  }
  if (cursor < limit_.value()) {
    v.OnBlock(FreeBlock(cursor, limit_.value() - cursor));
  }
}

absl::Status OfflineAllocator::CheckInvariants() const {
  uint64_t cursor = 0;
  for (const auto& [offset, block] : live_) {
    if (offset < cursor)
      return absl::InternalError(fmt::format("planned block at {} overlaps the one before", offset));
    cursor = offset + block.size;
  }
  if (cursor > limit_.value()) {
    return absl::InternalError(
        fmt::format("a live block ends at {}, beyond the limit {}", cursor, limit_.value()));
  }
  return CheckMemoryMapTiling(*this);
}

}  // namespace hbmsim::allocator
