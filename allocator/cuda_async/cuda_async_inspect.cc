// What reports see of the pool (stats, counters, the memory map) and the
// invariants of the header, checked after every event under --paranoid.
#include <algorithm>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"

namespace hbmsim {

AllocatorStats CudaAsyncAllocator::GetStats() const {
  AllocatorStats s = stats_;
  s.bytes_in_use = static_cast<int64_t>(held_bytes_);
  // For a stream with no queued frees of its own (the stats have no stream).
  s.largest_free_block_bytes =
      static_cast<int64_t>(LargestRequest(Want{0, std::nullopt, options_.internal_dependencies}));
  return s;
}

void CudaAsyncAllocator::AppendCounters(Counters& out) const {
  out.push_back({"va_ranges", static_cast<int64_t>(ranges_.size())});
  out.push_back({"va_ranges_reserved", ranges_reserved_});
  out.push_back({"granules_mapped", static_cast<int64_t>(mapped_.count())});
  out.push_back({"peak_granules_mapped", static_cast<int64_t>(peak_granules_mapped_)});
  out.push_back({"granules_physical", static_cast<int64_t>(physical_granules_)});
  out.push_back({"granules_remapped", granules_remapped_});
  out.push_back({"granules_released", granules_released_});
  out.push_back({"ranges_released", ranges_released_});
  out.push_back({"same_stream_reuses", same_stream_reuses_});
  out.push_back({"internal_dependency_reuses", internal_dependency_reuses_});
}

void CudaAsyncAllocator::WalkMemoryMap(MemoryMapVisitor& v) const {
  uint64_t index = 0;
  for (const auto& [base, size] : ranges_) {
    RegionInfo region{Offset(base), Bytes(size), index++, /*expandable=*/true};
    region.stream = 0;  // every stream's pool
    v.OnRegion(region);
    for (auto it = blocks_.lower_bound(base); it != blocks_.end() && it->first < base + size; ++it) {
      const Block& b = it->second;
      if (b.kind != Kind::kFree) {
        const BlockState state = b.kind == Kind::kInUse ? BlockState::kInUse : BlockState::kPendingFree;
        v.OnBlock({Offset(it->first), Bytes(b.size), Bytes(b.requested), state, b.handle, kNoHandle, b.id,
                   b.stream});
        continue;
      }
      // A free block shows its mapped granules as free, the rest as unmapped.
      uint64_t at = it->first;
      const uint64_t end = it->first + b.size;
      while (at < end) {
        const uint64_t g0 = mapped_.Floor(at);
        const bool mapped = mapped_.MappedIn(g0, g0 + mapped_.granule()) == 1;
        uint64_t stop = std::min(end, g0 + mapped_.granule());
        while (stop < end && (mapped_.MappedIn(stop, stop + mapped_.granule()) == 1) == mapped) {
          stop = std::min(end, stop + mapped_.granule());
        }
        v.OnBlock({Offset(at), Bytes(stop - at), Bytes(0), mapped ? BlockState::kFree : BlockState::kUnmapped,
                   kNoHandle, kNoHandle, 0, 0});
        at = stop;
      }
    }
  }
}

absl::Status CudaAsyncAllocator::CheckInvariants() const {
  if (absl::Status s = CheckMemoryMapTiling(*this); !s.ok()) return s;
  if (absl::Status s = mapped_.Check(); !s.ok()) return s;
  if (absl::Status s = CheckBlocks(); !s.ok()) return s;
  if (mapped_.count() > physical_granules_) {
    return absl::InternalError(
        fmt::format("{} granules mapped but the limit holds {}", mapped_.count(), physical_granules_));
  }
  // A run may cross from one range into the next (ranges can touch in VA).
  for (const auto& [start, end] : mapped_.runs()) {
    for (uint64_t at = start; at < end;) {
      auto range = ranges_.upper_bound(at);
      if (range == ranges_.begin() || std::prev(range)->first + std::prev(range)->second <= at) {
        return absl::InternalError(fmt::format("mapped granule at {} lies outside every VA range", at));
      }
      at = std::prev(range)->first + std::prev(range)->second;
    }
  }
  return absl::OkStatus();
}

absl::Status CudaAsyncAllocator::CheckBlocks() const {
  SizeIndex free_blocks;
  std::map<uint64_t, SizeIndex> queued;
  absl::flat_hash_map<uint64_t, uint32_t> refs;
  uint64_t held = 0;
  size_t handled = 0;
  const Block* previous = nullptr;
  for (const auto& [address, b] : blocks_) {
    if (address % options_.alignment != 0 || b.size % options_.alignment != 0 || b.size == 0) {
      return absl::InternalError(
          fmt::format("block at {} of {} bytes is not aligned to {}", address, b.size, options_.alignment));
    }
    if (b.kind == Kind::kFree && previous != nullptr && previous->kind == Kind::kFree &&
        previous->range == b.range) {
      return absl::InternalError(
          fmt::format("free block at {} follows a free block of the same range", address));
    }
    previous = &b;
    if (b.kind == Kind::kFree) free_blocks.emplace(b.size, address);
    if (b.kind == Kind::kQueued) queued[b.stream].emplace(b.size, address);
    if (b.handle != kNoHandle) {
      auto h = handles_.find(b.handle);
      if (h == handles_.end() || h->second != address) {
        return absl::InternalError(
            fmt::format("block at {} carries handle {} that does not name it", address, b.handle));
      }
      ++handled;
    }
    if (b.kind == Kind::kFree) continue;
    held += b.size;
    const uint64_t begin = mapped_.Floor(address);
    const uint64_t end = mapped_.Ceil(address + b.size);
    if (mapped_.MappedIn(begin, end) != (end - begin) / options_.granule) {
      return absl::InternalError(fmt::format("held block at {} touches an unmapped granule", address));
    }
    for (uint64_t g = begin / options_.granule; g < end / options_.granule; ++g) ++refs[g];
  }
  if (free_blocks != free_index_ || queued != queued_index_) {
    return absl::InternalError("the free or queued index disagrees with the blocks");
  }
  if (handled != handles_.size()) {
    return absl::InternalError(fmt::format("{} handles but {} blocks carry one", handles_.size(), handled));
  }
  if (held != held_bytes_ || refs != held_refs_) {
    return absl::InternalError(
        fmt::format("held blocks hold {} bytes but {} are counted, or the granule "
                    "counts disagree",
                    held, held_bytes_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim
