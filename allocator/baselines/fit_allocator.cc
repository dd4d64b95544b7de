#include "allocator/baselines/fit_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <vector>

#include "fmt/format.h"

namespace hbmsim {

FitAllocator::FitAllocator(const FitOptions& options)
    : options_(options),
      region_size_(options.memory_limit.RoundDown(options.alignment).value()),
      free_(/*index_by_size=*/false),
      best_(options.strategy == FitStrategy::kBestFit ? region_size_ : 0) {
  if (region_size_ > 0 && !best()) free_.Release(0, region_size_);
  stats_.bytes_limit = StatBytes(Bytes(region_size_));
  stats_.pool_bytes = StatBytes(Bytes(region_size_));
  stats_.peak_pool_bytes = StatBytes(Bytes(region_size_));
}

std::string_view FitAllocator::name() const {
  return options_.strategy == FitStrategy::kBestFit ? "best_fit" : "first_fit";
}

AllocResult FitAllocator::Allocate(const AllocRequest& req) {
  AllocResult r;
  r.rounded = req.bytes.RoundUp(options_.alignment);
  if (req.bytes.is_zero()) {
    r.handle = kNullHandle;
    return r;
  }
  const uint64_t rounded = r.rounded.value();
  std::optional<uint64_t> at;
  uint32_t record = 0;
  if (best()) {
    if (const std::optional<baselines::BestFitBlocks::Taken> t = best_.TakeBestFit(rounded)) {
      at = t->offset;
      record = t->block;
    }
  } else {
    at = free_.TakeFirstFit(rounded);
  }
  if (!at) {
    r.free_bytes = Bytes(best() ? best_.total() : free_.total());
    r.largest_free_block = Bytes(best() ? best_.Largest() : free_.Largest());
    r.status = ClassifyFailure(r.rounded, r.free_bytes);
    return r;
  }
  live_.emplace(*at, Block{rounded, req.bytes.value(), req.id.value(), req.stream.value(), record});
  stats_.num_allocs++;
  stats_.bytes_in_use += static_cast<int64_t>(rounded);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(rounded));
  r.handle = Handle(*at);
  r.has_offset = true;
  r.offset = Offset(*at);
  r.size = r.rounded;
  return r;
}

void FitAllocator::Free(Handle h) {
  auto it = live_.find(h.value());
  if (it == live_.end()) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle this fit policy never issued");
    return;
  }
  if (best()) {
    best_.Release(it->second.record);
  } else {
    free_.Release(it->first, it->second.size);
  }
  stats_.bytes_in_use -= static_cast<int64_t>(it->second.size);
  live_.erase(it);
}

AllocatorStats FitAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.largest_free_block_bytes = StatBytes(Bytes(best() ? best_.Largest() : free_.Largest()));
  return s;
}

void FitAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  if (region_size_ == 0) return;
  v.OnRegion({Offset(0), Bytes(region_size_), 0});
  std::vector<BlockInfo> blocks;
  blocks.reserve(live_.size() + (best() ? best_.count() : free_.count()));
  for (const auto& [offset, block] : live_) {
    blocks.push_back({Offset(offset), Bytes(block.size), Bytes(block.requested), BlockState::kInUse, offset,
                      kNoHandle, block.id, block.stream});
  }
  const auto add_free = [&](uint64_t offset, uint64_t size) {
    blocks.push_back({Offset(offset), Bytes(size), Bytes(0), BlockState::kFree, kNoHandle, kNoHandle, 0, 0});
  };
  if (best()) {
    best_.ForEach(add_free);
  } else {
    free_.ForEach(add_free);
  }
  // Offsets are distinct, so the order is the address order whatever the hash map's.
  std::sort(blocks.begin(), blocks.end(),
            [](const BlockInfo& a, const BlockInfo& b) { return a.offset < b.offset; });
  for (const BlockInfo& b : blocks) v.OnBlock(b);
}

absl::Status FitAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = best() ? best_.Check() : free_.Check(); !s.ok()) return s;
  uint64_t live_bytes = 0;
  for (const auto& [offset, block] : live_) {
    if (offset % options_.alignment != 0 || block.size % options_.alignment != 0) {
      return absl::InternalError(
          fmt::format("block at {} of size {} is not aligned to {}", offset, block.size, options_.alignment));
    }
    live_bytes += block.size;
  }
  const uint64_t free_bytes = best() ? best_.total() : free_.total();
  if (live_bytes + free_bytes != region_size_) {
    return absl::InternalError(fmt::format("live {} + free {} != region {}", live_bytes, free_bytes, region_size_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim
