// The address space of one TPU HBM: blocks tiling [0, capacity), a best-fit
// index of the free ones, and the compaction planner.
//
//   0                                                           capacity
//   ┌──────┬──────┬───────────┬────────┬──────────┬───────────┐
//   │ prog │ prog │   free    │ buffer │   free   │  buffer   │
//   └──────┴──────┴───────────┴────────┴──────────┴───────────┘
//   first fit from the bottom ──▶        ◀── best fit, top end of the block
//
// Blocks live in a pool and are chained in address order (prev/next), so a
// block is named by its Ref, which stays valid while the block exists,
// compaction included: the owner of a buffer or program keeps the Ref and
// never searches by address. Pool slots of deleted blocks are chained through
// `next` into a spare list (no side vector: compaction deletes every free
// block at once and must not allocate to do it). The free index is BFC's bin index
// (allocator/core/bins.h) keyed by (size, ~offset): its best fit, the least
// key >= (size, 0), is the smallest free block that fits and, among blocks of
// that size, the one with the highest address. (A btree_map of blocks and a
// btree_set index paid ~6 tree operations per allocation; this pays a bin
// search and O(1) list updates.)
//
// Invariants (HbmLayout::Check):
//   the chain from the lowest block tiles [0, capacity): next.offset ==
//   offset + size, prev links mirror next links, no empty block;
//   no two free blocks are adjacent (eager coalescing);
//   free_index == { (size, ~offset) -> Ref : block is free };
//   free_bytes == Σ free sizes;
//   the spare list holds pool_.size() − block_count() slots, none in the chain.
// Memory is O(blocks), never O(capacity / granule).
#ifndef HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_
#define HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/bins.h"
#include "allocator/core/memory_map.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

class HbmLayout {
 public:
  using Ref = uint32_t;
  static constexpr Ref kNone = ~Ref{0};

  struct Block {
    uint64_t offset = 0;
    Bytes size;
    BlockState state = BlockState::kFree;
    uint64_t owner = 0;  // buffer handle or program id; 0 when free
    Ref prev = kNone;    // the block below, kNone at 0
    Ref next = kNone;    // the block above, kNone at the top
  };

  // What a compaction plan does with a block.
  enum class Role : uint8_t { kFree, kMovable, kFixed };
  // What Compact did.
  struct Compaction {
    int64_t blocks_moved = 0;
    uint64_t bytes_moved = 0;  // Σ size of blocks whose offset changed
  };

  explicit HbmLayout(Bytes capacity);
  // A copy has the same blocks under the same Refs (what-if runs and tests
  // fork a policy); its free index is rebuilt from them.
  HbmLayout(const HbmLayout& other);
  HbmLayout& operator=(const HbmLayout& other);

  Bytes capacity() const { return capacity_; }
  Bytes free_bytes() const { return free_bytes_; }
  Bytes largest_free_block() const;
  size_t block_count() const { return pool_.size() - spares_; }
  const Block& block(Ref r) const { return pool_[r]; }
  // The size of the free block right above `below` (the block at 0 when
  // kNone), or zero when that block is held or absent.
  Bytes FreeBlockAbove(Ref below) const;

  // Calls f(block) for every block from address 0 up.
  template <typename F>
  void ForEach(F f) const {
    for (Ref r = head_; r != kNone; r = pool_[r].next) f(pool_[r]);
  }

  // The smallest free block holding `size` (highest address among equals);
  // the new block takes its top end. nullopt when none is big enough.
  std::optional<Ref> PlaceBestFitTop(Bytes size, BlockState state, uint64_t owner);
  // The lowest free block holding `size`; the new block takes its bottom end.
  std::optional<Ref> PlaceFirstFitBottom(Bytes size, BlockState state, uint64_t owner);
  void SetState(Ref r, BlockState state) { pool_[r].state = state; }
  void SetOwner(Ref r, uint64_t owner) { pool_[r].owner = owner; }
  // The block becomes free and merges with free neighbours (its Ref may go).
  void Release(Ref r);

  // Plans "slide every movable block toward the top, keeping their order,
  // around the fixed ones"; blocks whose role is kFree count as free space.
  // Calls on_place(ref, to, block) for each movable block, highest first, and
  // returns the largest free gap of the planned layout. Movable blocks only
  // ever move up, so a plan always exists.
  template <typename RoleOf, typename OnPlace>
  Bytes PlanCompaction(RoleOf role_of, OnPlace on_place) const;

  // Carries out PlanCompaction's plan with kInUse blocks movable and every
  // other held block (programs, queued frees) fixed, in place, with no heap
  // allocation once warm. Refs of held blocks stay valid; when anything moves,
  // every free block is renewed and the free index rebuilt. When nothing
  // would move the layout is not touched.
  Compaction Compact();

  absl::Status Check() const;

 private:
  static uint64_t IndexPtr(uint64_t offset) { return ~offset; }  // ties go to the highest address
  // Always inlined: each is a few stores around an index call, made 4-5
  // times per allocate-free pair, and GCC kept them out of line.
  [[gnu::always_inline]] inline Ref NewBlock(const Block& b);
  [[gnu::always_inline]] inline void DeleteBlock(Ref r);
  [[gnu::always_inline]] inline void IndexFree(Ref r);
  [[gnu::always_inline]] inline void UnindexFree(Ref r);
  // Splits free block `r` so that [offset, offset + size) becomes a held block.
  // Inlined so that PlaceBestFitTop's copy drops the rest-above case (its
  // block ends where `r` ended) and reuses the loads of `r`.
  [[gnu::always_inline]] inline Ref Carve(Ref r, uint64_t offset, Bytes size, BlockState state,
                                          uint64_t owner);
  // Compact's walk down the chain; without kApply it only answers whether
  // any block would move (stopping at the first that does).
  template <bool kApply>
  bool CompactWalk(Compaction& done);

  Bytes capacity_;
  Bytes free_bytes_;
  std::vector<Block> pool_;
  Ref spare_ = kNone;  // the spare list, chained through Block::next
  size_t spares_ = 0;
  Ref head_ = kNone;
  Ref tail_ = kNone;
  allocator::BinIndex free_index_;  // by value: one load less per index operation than behind a pointer
  std::vector<Ref> fixed_;    // reused by CompactWalk: fixed blocks above the cursor
};

template <typename RoleOf, typename OnPlace>
Bytes HbmLayout::PlanCompaction(RoleOf role_of, OnPlace on_place) const {
  Ref fixed = tail_;  // the highest fixed block below the cursor
  auto skip_to_fixed = [&](uint64_t cursor) {
    while (fixed != kNone && (role_of(pool_[fixed]) != Role::kFixed || pool_[fixed].offset >= cursor)) {
      fixed = pool_[fixed].prev;
    }
  };
  uint64_t cursor = capacity_.value();  // everything above is planned
  uint64_t largest = 0;
  for (Ref r = tail_; r != kNone; r = pool_[r].prev) {
    const Block& b = pool_[r];
    if (role_of(b) != Role::kMovable) continue;
    const uint64_t size = b.size.value();
    for (;;) {
      skip_to_fixed(cursor);
      const uint64_t target = cursor - size;  // cursor >= the block's old end
      const uint64_t fixed_end = fixed == kNone ? 0 : pool_[fixed].offset + pool_[fixed].size.value();
      if (fixed != kNone && fixed_end > target) {
        // The fixed block is in the way: the gap above it stays free.
        largest = std::max(largest, cursor - fixed_end);
        cursor = pool_[fixed].offset;
        fixed = pool_[fixed].prev;
        continue;
      }
      on_place(r, target, b);
      cursor = target;
      break;
    }
  }
  for (skip_to_fixed(cursor); fixed != kNone; skip_to_fixed(cursor)) {
    const uint64_t fixed_end = pool_[fixed].offset + pool_[fixed].size.value();
    largest = std::max(largest, cursor - fixed_end);
    cursor = pool_[fixed].offset;
    fixed = pool_[fixed].prev;
  }
  return Bytes(std::max(largest, cursor));
}

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_HBM_LAYOUT_H_
