#include "allocator/baselines/ideal_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::allocator {

IdealAllocator::IdealAllocator(Bytes memory_limit) : FixedPoolAllocator(memory_limit), limit_(memory_limit) {}

AllocResult IdealAllocator::Allocate(const AllocRequest& req) {
  AllocResult r;
  r.rounded = req.bytes;
  if (req.bytes.is_zero()) {
    r.handle = kNullHandle;
    return r;
  }
  const Bytes in_use(static_cast<uint64_t>(stats_.bytes_in_use));
  const Bytes free = limit_ - in_use;
  // Bytes::Max() is where saturating sums land, so no limit holds it (units.h).
  if (req.bytes > free || req.bytes == Bytes::Max()) {
    r.status = AllocStatus::kOom;  // everything free is contiguous: never fragmentation
    r.free_bytes = free;
    r.largest_free_block = free;
    return r;
  }
  const uint64_t handle = next_handle_++;
  live_.emplace(handle, Block{req.bytes.value(), req.id.value(), req.stream.value()});
  CountPlaced(req.bytes.value());
  SetPlaced(r, handle, in_use.value(), req.bytes);
  return r;
}

void IdealAllocator::Free(Handle h) { ForgetLive(live_, h, "free of a handle the ideal policy never issued"); }

AllocatorStats IdealAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes =
      StatBytes(limit_.SaturatingSub(Bytes(static_cast<uint64_t>(stats_.bytes_in_use))));
  return s;
}

void IdealAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  if (limit_.is_zero()) return;
  v.OnRegion({Offset(0), limit_, 0});
  std::vector<std::pair<uint64_t, const Block*>> by_handle;  // allocation order is address order
  by_handle.reserve(live_.size());
  for (const auto& [handle, block] : live_) by_handle.emplace_back(handle, &block);
  std::sort(by_handle.begin(), by_handle.end());  // handles are distinct
  uint64_t cursor = 0;
  for (const auto& [handle, block] : by_handle) {
    v.OnBlock({Offset(cursor), Bytes(block->size), Bytes(block->size), BlockState::kInUse, handle, kNoHandle,
               block->id, block->stream});
    cursor += block->size;
  }
  if (cursor < limit_.value()) {
    v.OnBlock(FreeBlock(cursor, limit_.value() - cursor));
  }
}

absl::Status IdealAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (static_cast<uint64_t>(stats_.bytes_in_use) > limit_.value()) {
    return absl::InternalError(
        fmt::format("bytes_in_use {} exceeds the limit {}", stats_.bytes_in_use, limit_.value()));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
