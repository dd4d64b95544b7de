// The address space of one TPU HBM: blocks tiling [0, capacity), a best-fit
// index of the free ones, and the compaction planner.
//
//   0                                                           capacity
//   ┌──────┬──────┬───────────┬────────┬──────────┬───────────┐
//   │ prog │ prog │   free    │ buffer │   free   │  buffer   │
//   └──────┴──────┴───────────┴────────┴──────────┴───────────┘
//   first fit from the bottom ──▶        ◀── best fit, top end of the block
//
// Invariants (HbmLayout::Check):
//   the blocks tile [0, capacity): next.offset == offset + size, no empty block;
//   no two free blocks are adjacent (eager coalescing);
//   free_index == { (size, offset) : block is free };  free_bytes == Σ free sizes.
// Memory is O(blocks), never O(capacity / granule).
#ifndef HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_
#define HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "allocator/core/memory_map.h"
#include "allocator/core/units.h"
#include "allocator/tpu/recycling_allocator.h"

namespace hbmsim {

class HbmLayout {
 public:
  struct Block {
    Bytes size;
    BlockState state = BlockState::kFree;
    uint64_t owner = 0;  // buffer handle or program id; 0 when free
  };
  using BlockMap = absl::btree_map<uint64_t, Block, std::less<uint64_t>,
                                   RecyclingAllocator<std::pair<const uint64_t, Block>>>;  // keyed by offset

  // What a compaction plan does with a block.
  enum class Role : uint8_t { kFree, kMovable, kFixed };
  struct Move {
    uint64_t from;
    uint64_t to;
  };

  explicit HbmLayout(Bytes capacity);

  Bytes capacity() const { return capacity_; }
  Bytes free_bytes() const { return free_bytes_; }
  Bytes largest_free_block() const;
  const BlockMap& blocks() const { return blocks_; }
  const Block& at(Offset offset) const { return blocks_.at(offset.value()); }
  // The free block starting exactly at `offset`, or zero.
  Bytes FreeBlockAt(Offset offset) const;

  // The smallest free block holding `size` (highest address among equals);
  // the new block takes its top end. nullopt when none is big enough.
  std::optional<Offset> PlaceBestFitTop(Bytes size, BlockState state, uint64_t owner);
  // The lowest free block holding `size`; the new block takes its bottom end.
  std::optional<Offset> PlaceFirstFitBottom(Bytes size, BlockState state, uint64_t owner);
  void SetState(Offset offset, BlockState state);
  // The block becomes free and merges with free neighbours.
  void Release(Offset offset);

  // Plans "slide every movable block toward the top, keeping their order,
  // around the fixed ones"; blocks whose role is kFree count as free space.
  // Calls on_place(from, to, block) for each movable block, highest first, and
  // returns the largest free gap of the planned layout. Movable blocks only
  // ever move up, so a plan always exists.
  template <typename RoleOf, typename OnPlace>
  Bytes PlanCompaction(RoleOf role_of, OnPlace on_place) const;

  // Applies the moves of a plan (from the current layout) and rebuilds the
  // free blocks around the result.
  void Relocate(const std::vector<Move>& moves);

  absl::Status Check() const;

 private:
  using FreeKey = std::pair<uint64_t, uint64_t>;  // (size, ~offset): best fit, top first
  static FreeKey KeyOf(uint64_t offset, Bytes size) { return {size.value(), ~offset}; }
  void AddFree(uint64_t offset, Bytes size);
  void RemoveFree(uint64_t offset, Bytes size);
  // Splits free block `it` so that [offset, offset + size) becomes a held block.
  Offset Carve(BlockMap::iterator it, uint64_t offset, Bytes size, BlockState state, uint64_t owner);

  Bytes capacity_;
  Bytes free_bytes_;
  BlockMap blocks_;
  absl::btree_set<FreeKey, std::less<FreeKey>, RecyclingAllocator<FreeKey>> free_index_;
  std::vector<std::pair<uint64_t, Block>> scratch_;  // reused by Relocate
};

template <typename RoleOf, typename OnPlace>
Bytes HbmLayout::PlanCompaction(RoleOf role_of, OnPlace on_place) const {
  const auto rend = blocks_.rend();
  auto fixed = blocks_.rbegin();  // the highest fixed block below the cursor
  auto skip_to_fixed = [&](uint64_t cursor) {
    while (fixed != rend && (role_of(fixed->second) != Role::kFixed || fixed->first >= cursor)) ++fixed;
  };
  uint64_t cursor = capacity_.value();  // everything above is planned
  uint64_t largest = 0;
  for (auto it = blocks_.rbegin(); it != rend; ++it) {
    if (role_of(it->second) != Role::kMovable) continue;
    const uint64_t size = it->second.size.value();
    for (;;) {
      skip_to_fixed(cursor);
      const uint64_t target = cursor - size;  // cursor >= the block's old end
      const uint64_t fixed_end = fixed == rend ? 0 : fixed->first + fixed->second.size.value();
      if (fixed != rend && fixed_end > target) {
        // The fixed block is in the way: the gap above it stays free.
        largest = std::max(largest, cursor - fixed_end);
        cursor = fixed->first;
        ++fixed;
        continue;
      }
      on_place(it->first, target, it->second);
      cursor = target;
      break;
    }
  }
  for (skip_to_fixed(cursor); fixed != rend; skip_to_fixed(cursor)) {
    const uint64_t fixed_end = fixed->first + fixed->second.size.value();
    largest = std::max(largest, cursor - fixed_end);
    cursor = fixed->first;
    ++fixed;
  }
  return Bytes(std::max(largest, cursor));
}

}  // namespace hbmsim

#endif  // HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_
