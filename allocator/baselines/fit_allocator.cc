#include "allocator/baselines/fit_allocator.h"
#include "allocator/core/dcheck.h"

#include <algorithm>
#include <vector>

#include "fmt/format.h"

namespace hbmsim::allocator {

FitAllocator::FitAllocator(const FitOptions& options)
    : FixedPoolAllocator(options.memory_limit.RoundDown(options.alignment)),
      options_(options),
      region_size_(options.memory_limit.RoundDown(options.alignment).value()),
      free_(/*index_by_size=*/false),
      best_(options.strategy == FitStrategy::kBestFit ? region_size_ : 0) {
  if (region_size_ > 0 && !best()) free_.Release(0, region_size_);
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
  const Block block{rounded, req.bytes.value(), req.id.value(), req.stream.value(), *at, true};
  if (best()) {
    if (record >= by_record_.size()) by_record_.resize(record + 1);
    by_record_[record] = block;
  } else {
    live_.emplace(*at, block);
  }
  ++live_blocks_;
  CountPlaced(rounded);
  SetPlaced(r, best() ? record : *at, *at, r.rounded);
  return r;
}

void FitAllocator::Free(Handle h) {
  Block* block = nullptr;
  absl::flat_hash_map<uint64_t, Block>::iterator it;
  if (best()) {
    if (h.value() < by_record_.size() && by_record_[h.value()].live) block = &by_record_[h.value()];
  } else if (it = live_.find(h.value()); it != live_.end()) {
    block = &it->second;
  }
  if (block == nullptr) {  // kNullHandle (a zero-byte request); anything else is the caller's bug
    HBMSIM_DCHECK(h == kNullHandle, "free of a handle this fit policy never issued");
    return;
  }
  stats_.bytes_in_use -= static_cast<int64_t>(block->size);
  --live_blocks_;
  if (best()) {
    best_.Release(static_cast<uint32_t>(h.value()));
    block->live = false;
  } else {
    free_.Release(block->offset, block->size);
    live_.erase(it);
  }
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
  blocks.reserve(live_blocks_ + (best() ? best_.count() : free_.count()));
  ForEachLive([&](const Block& b) {
    const uint64_t handle = best() ? static_cast<uint64_t>(&b - by_record_.data()) : b.offset;
    blocks.push_back({Offset(b.offset), Bytes(b.size), Bytes(b.requested), BlockState::kInUse, handle, kNoHandle,
                      b.id, b.stream});
  });
  const auto add_free = [&](uint64_t offset, uint64_t size) {
    blocks.push_back(FreeBlock(offset, size));
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
  const Block* misaligned = nullptr;
  ForEachLive([&](const Block& b) {
    if (b.offset % options_.alignment != 0 || b.size % options_.alignment != 0) misaligned = &b;
    live_bytes += b.size;
  });
  if (misaligned != nullptr) {
    return absl::InternalError(fmt::format("block at {} of size {} is not aligned to {}", misaligned->offset,
                                           misaligned->size, options_.alignment));
  }
  const uint64_t free_bytes = best() ? best_.total() : free_.total();
  if (live_bytes + free_bytes != region_size_) {
    return absl::InternalError(fmt::format("live {} + free {} != region {}", live_bytes, free_bytes, region_size_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
