#include "allocator/tpu/hbm_layout.h"

#include "fmt/format.h"

namespace hbmsim {

HbmLayout::HbmLayout(Bytes capacity) : capacity_(capacity) {
  if (!capacity.is_zero()) AddFree(0, capacity);
}

Bytes HbmLayout::largest_free_block() const {
  if (free_index_.empty()) return Bytes(0);
  return Bytes(free_index_.rbegin()->first);
}

Bytes HbmLayout::FreeBlockAt(Offset offset) const {
  auto it = blocks_.find(offset.value());
  if (it == blocks_.end() || it->second.state != BlockState::kFree) return Bytes(0);
  return it->second.size;
}

void HbmLayout::AddFree(uint64_t offset, Bytes size) {
  blocks_[offset] = Block{size, BlockState::kFree, 0};
  free_index_.insert(KeyOf(offset, size));
  free_bytes_ += size;
}

void HbmLayout::RemoveFree(uint64_t offset, Bytes size) {
  free_index_.erase(KeyOf(offset, size));
  free_bytes_ -= size;
}

Offset HbmLayout::Carve(BlockMap::iterator it, uint64_t offset, Bytes size, BlockState state,
                        uint64_t owner) {
  const uint64_t block_start = it->first;
  const Bytes block_size = it->second.size;
  RemoveFree(block_start, block_size);
  blocks_.erase(it);
  const uint64_t end = offset + size.value();
  const uint64_t block_end = block_start + block_size.value();
  if (offset > block_start) AddFree(block_start, Bytes(offset - block_start));
  if (block_end > end) AddFree(end, Bytes(block_end - end));
  blocks_[offset] = Block{size, state, owner};
  return Offset(offset);
}

std::optional<Offset> HbmLayout::PlaceBestFitTop(Bytes size, BlockState state, uint64_t owner) {
  // Keys are (size, ~offset): the first key >= (size, 0) is the smallest block
  // that fits, and among blocks of that size the one with the highest address.
  auto best = free_index_.lower_bound(FreeKey{size.value(), 0});
  if (best == free_index_.end() || size.is_zero()) return std::nullopt;
  const uint64_t block_start = ~best->second;
  const uint64_t offset = block_start + best->first - size.value();
  return Carve(blocks_.find(block_start), offset, size, state, owner);
}

std::optional<Offset> HbmLayout::PlaceFirstFitBottom(Bytes size, BlockState state, uint64_t owner) {
  if (size.is_zero() || largest_free_block() < size) return std::nullopt;
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    if (it->second.state == BlockState::kFree && it->second.size >= size) {
      return Carve(it, it->first, size, state, owner);
    }
  }
  return std::nullopt;
}

void HbmLayout::SetState(Offset offset, BlockState state) { blocks_.at(offset.value()).state = state; }

void HbmLayout::Release(Offset offset) {
  auto it = blocks_.find(offset.value());
  uint64_t start = it->first;
  Bytes size = it->second.size;
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.state == BlockState::kFree) {
      start = prev->first;
      size += prev->second.size;
      RemoveFree(prev->first, prev->second.size);
      blocks_.erase(prev);
    }
  }
  auto next = blocks_.find(offset.value() + blocks_.at(offset.value()).size.value());
  if (next != blocks_.end() && next->second.state == BlockState::kFree) {
    size += next->second.size;
    RemoveFree(next->first, next->second.size);
    blocks_.erase(next);
  }
  blocks_.erase(offset.value());
  AddFree(start, size);
}

void HbmLayout::Relocate(const std::vector<Move>& moves) {
  // Moves come highest first, as PlanCompaction emits them.
  scratch_.clear();
  size_t next_move = 0;
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    if (it->second.state == BlockState::kFree) continue;
    uint64_t offset = it->first;
    if (next_move < moves.size() && moves[next_move].from == offset) offset = moves[next_move++].to;
    scratch_.emplace_back(offset, it->second);
  }
  std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  blocks_.clear();
  free_index_.clear();
  free_bytes_ = Bytes(0);
  uint64_t cursor = 0;
  for (const auto& [offset, block] : scratch_) {
    if (offset > cursor) AddFree(cursor, Bytes(offset - cursor));
    blocks_.emplace_hint(blocks_.end(), offset, block);
    cursor = offset + block.size.value();
  }
  if (capacity_.value() > cursor) AddFree(cursor, Bytes(capacity_.value() - cursor));
}

absl::Status HbmLayout::Check() const {
  uint64_t cursor = 0;
  bool previous_free = false;
  Bytes free_sum;
  size_t free_blocks = 0;
  for (const auto& [offset, block] : blocks_) {
    if (offset != cursor) {
      return absl::InternalError(fmt::format("block at {} does not start at {}", offset, cursor));
    }
    if (block.size.is_zero()) return absl::InternalError(fmt::format("empty block at {}", offset));
    const bool is_free = block.state == BlockState::kFree;
    if (is_free && previous_free) {
      return absl::InternalError(
          fmt::format("free block at {} follows a free block (not coalesced)", offset));
    }
    if (is_free) {
      ++free_blocks;
      free_sum += block.size;
      if (!free_index_.contains(KeyOf(offset, block.size))) {
        return absl::InternalError(fmt::format("free block at {} ({} B) missing from the best-fit index",
                                               offset, block.size.value()));
      }
    }
    previous_free = is_free;
    cursor = offset + block.size.value();
  }
  if (cursor != capacity_.value()) {
    return absl::InternalError(
        fmt::format("blocks end at {}, not at the capacity {}", cursor, capacity_.value()));
  }
  if (free_blocks != free_index_.size()) {
    return absl::InternalError(
        fmt::format("best-fit index holds {} entries for {} free blocks", free_index_.size(), free_blocks));
  }
  if (free_sum != free_bytes_) {
    return absl::InternalError(
        fmt::format("free_bytes is {} but free blocks sum to {}", free_bytes_.value(), free_sum.value()));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim
