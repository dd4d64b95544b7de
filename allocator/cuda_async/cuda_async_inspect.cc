// What reports see of the pool (stats, counters, the memory map) and the
// invariants of the header, checked after every event under --paranoid.
#include <algorithm>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"

namespace hbmsim::allocator {

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
  for (const auto& [base, range] : ranges_) {
    RegionInfo region{Offset(base), Bytes(range.size), index++, /*expandable=*/true};
    region.stream = 0;  // every stream's pool
    v.OnRegion(region);
    for (uint32_t id = range.first; id != kNone; id = blocks_[id].next) {
      const Block& b = blocks_[id];
      if (b.kind != Kind::kFree) {
        const BlockState state = b.kind == Kind::kInUse ? BlockState::kInUse : BlockState::kPendingFree;
        v.OnBlock({Offset(b.address), Bytes(b.size), Bytes(b.requested), state, b.handle, kNoHandle, b.id,
                   b.stream});
        continue;
      }
      // A free block shows its mapped granules as free, the rest as unmapped.
      uint64_t at = b.address;
      const uint64_t end = b.address + b.size;
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
      if (range == ranges_.begin() || std::prev(range)->first + std::prev(range)->second.size <= at) {
        return absl::InternalError(fmt::format("mapped granule at {} lies outside every VA range", at));
      }
      at = std::prev(range)->first + std::prev(range)->second.size;
    }
  }
  return absl::OkStatus();
}

// What the walk of every range's blocks finds, to compare with the indexes,
// handles and counts.
struct CudaAsyncAllocator::BlockTally {
  std::set<QueuedKey> free_blocks;
  std::map<uint64_t, QueuedIndex> queued;
  uint64_t held = 0;
  uint64_t held_granules = 0;
  size_t handled = 0;
  size_t records = 0;
};

// Walks every range's blocks by their links and rebuilds what the indexes,
// handles and counts should hold.
absl::Status CudaAsyncAllocator::CheckBlocks() const {
  if (absl::Status s = free_index_.CheckInvariants(); !s.ok()) return s;
  BlockTally tally;
  for (const auto& [base, range] : ranges_) {
    if (absl::Status s = CheckRangeMapping(base, range); !s.ok()) return s;
    if (absl::Status s = CheckRangeBlocks(base, range, tally); !s.ok()) return s;
  }
  return CheckTally(tally);
}

// The range starts with its first block, and its mapped count and flags
// agree with the mapped runs.
absl::Status CudaAsyncAllocator::CheckRangeMapping(uint64_t base, const Range& range) const {
  const uint64_t g = options_.granule;
  if (range.base != base || range.size % g != 0 || range.first == kNone ||
      blocks_[range.first].address != base || blocks_[range.first].prev != kNone) {
    return absl::InternalError(fmt::format("range at {} does not start with its first block", base));
  }
  if (range.mapped != mapped_.MappedIn(base, base + range.size)) {
    return absl::InternalError(fmt::format("range at {} counts {} mapped granules, the runs say {}", base,
                                           range.mapped, mapped_.MappedIn(base, base + range.size)));
  }
  if (range.mapped * g == range.size) return absl::OkStatus();
  if (range.mapped_prefix > range.is_mapped.size() ||
      std::count(range.is_mapped.begin(), range.is_mapped.begin() + static_cast<ptrdiff_t>(range.mapped_prefix),
                 uint8_t{0}) != 0) {
    return absl::InternalError(fmt::format("range at {} has an unmapped granule below its mapped prefix {}",
                                           base, range.mapped_prefix));
  }
  for (uint64_t i = 0; i < range.size / g; ++i) {
    const bool flag = i < range.is_mapped.size() && range.is_mapped[i] != 0;
    if (flag != (mapped_.MappedIn(base + i * g, base + (i + 1) * g) == 1)) {
      return absl::InternalError(
          fmt::format("granule {} of range at {} is flagged {}mapped, wrongly", i, base, flag ? "" : "un"));
    }
  }
  return absl::OkStatus();
}

// The range's blocks tile it by their links; each granule counts the held
// blocks on it.
absl::Status CudaAsyncAllocator::CheckRangeBlocks(uint64_t base, const Range& range, BlockTally& tally) const {
  const uint64_t g = options_.granule;
  std::vector<uint32_t> refs(range.size / g, 0);
  uint64_t at = base;
  const Block* previous = nullptr;
  for (uint32_t id = range.first; id != kNone; id = blocks_[id].next) {
    const Block& b = blocks_[id];
    ++tally.records;
    if (b.address != at || b.range != &range || (previous != nullptr && blocks_[b.prev].next != id)) {
      return absl::InternalError(
          fmt::format("block at {} is not linked after the block ending at {}", b.address, at));
    }
    at += b.size;
    if (b.address % options_.alignment != 0 || b.size % options_.alignment != 0 || b.size == 0) {
      return absl::InternalError(
          fmt::format("block at {} of {} bytes is not aligned to {}", b.address, b.size, options_.alignment));
    }
    if (b.kind == Kind::kFree && previous != nullptr && previous->kind == Kind::kFree) {
      return absl::InternalError(fmt::format("free block at {} follows a free block of the same range", b.address));
    }
    previous = &b;
    if (absl::Status s = CheckBlock(b, id, tally); !s.ok()) return s;
    if (b.kind == Kind::kFree) continue;
    const uint64_t begin = mapped_.Floor(b.address);
    const uint64_t end = mapped_.Ceil(b.address + b.size);
    for (uint64_t i = (begin - base) / g; i < (end - base) / g; ++i) tally.held_granules += refs[i]++ == 0 ? 1 : 0;
  }
  if (at != base + range.size) {
    return absl::InternalError(fmt::format("the blocks of range at {} end at {}", base, at));
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    if (refs[i] != (i < range.held.size() ? range.held[i] : 0)) {
      return absl::InternalError(fmt::format("granule {} of range at {} counts {} held blocks, not {}", i, base,
                                             i < range.held.size() ? range.held[i] : 0, refs[i]));
    }
  }
  const Block& first = blocks_[range.first];
  if (first.kind == Kind::kFree && first.size == range.size && range.mapped == 0) {
    return absl::InternalError(fmt::format("range at {} holds nothing and maps nothing", base));
  }
  return absl::OkStatus();
}

// One block: counted for the index of its kind, its handle naming it, a
// held one on mapped granules only.
absl::Status CudaAsyncAllocator::CheckBlock(const Block& b, uint32_t id, BlockTally& tally) const {
  if (b.kind == Kind::kFree) tally.free_blocks.insert({b.size, b.address, id});
  if (b.kind == Kind::kQueued) tally.queued[b.stream].insert({b.size, b.address, id});
  if (b.handle != kNoHandle) {
    const uint32_t* h = handles_.Find(b.handle);
    if (h == nullptr || *h != id) {
      return absl::InternalError(
          fmt::format("block at {} carries handle {} that does not name it", b.address, b.handle));
    }
    ++tally.handled;
  }
  if (b.kind == Kind::kFree) return absl::OkStatus();
  tally.held += b.size;
  const uint64_t begin = mapped_.Floor(b.address);
  const uint64_t end = mapped_.Ceil(b.address + b.size);
  if (mapped_.MappedIn(begin, end) != (end - begin) / options_.granule) {
    return absl::InternalError(fmt::format("held block at {} touches an unmapped granule", b.address));
  }
  return absl::OkStatus();
}

// What the walk found against the record count, the indexes, the handles and the held counters.
absl::Status CudaAsyncAllocator::CheckTally(const BlockTally& tally) const {
  if (tally.records + spare_blocks_.size() != blocks_.size()) {
    return absl::InternalError(fmt::format("{} block records, {} spare, {} in ranges", blocks_.size(),
                                           spare_blocks_.size(), tally.records));
  }
  std::set<QueuedKey> indexed;
  for (int bin = 0; bin < allocator::kNumBins; ++bin) {
    free_index_.ForEach(bin, [&](const allocator::FreeEntry& e) {
      indexed.insert({e.size, e.ptr, static_cast<uint32_t>(e.handle)});
    });
  }
  if (tally.free_blocks != indexed || tally.queued != queued_index_) {
    return absl::InternalError("the free or queued index disagrees with the blocks");
  }
  if (tally.handled != handles_.size()) {
    return absl::InternalError(fmt::format("{} handles but {} blocks carry one", handles_.size(), tally.handled));
  }
  if (tally.held != held_bytes_ || tally.held_granules != held_granules_) {
    return absl::InternalError(fmt::format("held blocks hold {} bytes in {} granules but {} in {} are counted",
                                           tally.held, tally.held_granules, held_bytes_, held_granules_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
