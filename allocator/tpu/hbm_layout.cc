#include "allocator/tpu/hbm_layout.h"

#include "fmt/format.h"

namespace hbmsim::allocator {

HbmLayout::HbmLayout(Bytes capacity) : capacity_(capacity) {
  if (capacity.is_zero()) return;
  head_ = tail_ = NewBlock(Block{0, capacity, BlockState::kFree, 0, kNone, kNone});
  IndexFree(head_);
}

HbmLayout::HbmLayout(const HbmLayout& other) : HbmLayout(Bytes(0)) { *this = other; }

HbmLayout& HbmLayout::operator=(const HbmLayout& other) {
  if (this == &other) return *this;
  capacity_ = other.capacity_;
  pool_ = other.pool_;
  spare_ = other.spare_;
  spares_ = other.spares_;
  head_ = other.head_;
  tail_ = other.tail_;
  free_index_.Clear();
  free_bytes_ = Bytes(0);
  for (Ref r = head_; r != kNone; r = pool_[r].next) {
    if (pool_[r].state == BlockState::kFree) IndexFree(r);
  }
  return *this;
}

Bytes HbmLayout::largest_free_block() const {
  const std::optional<allocator::FreeEntry> e = free_index_.Largest();
  return e ? Bytes(e->size) : Bytes(0);
}

Bytes HbmLayout::FreeBlockAbove(Ref below) const {
  const Ref r = below == kNone ? head_ : pool_[below].next;
  if (r == kNone || pool_[r].state != BlockState::kFree) return Bytes(0);
  return pool_[r].size;
}

inline HbmLayout::Ref HbmLayout::NewBlock(const Block& b) {
  if (spare_ != kNone) {
    const Ref r = spare_;
    spare_ = pool_[r].next;
    --spares_;
    pool_[r] = b;
    return r;
  }
  pool_.push_back(b);
  return static_cast<Ref>(pool_.size() - 1);
}

// Only `next` is overwritten: a walk down the chain that has read the
// block's `prev` may delete it (CompactWalk does).
inline void HbmLayout::DeleteBlock(Ref r) {
  pool_[r].next = spare_;
  spare_ = r;
  ++spares_;
}

inline void HbmLayout::IndexFree(Ref r) {
  const Block& b = pool_[r];
  free_index_.Insert(allocator::BinNumForSize(b.size), {b.size.value(), IndexPtr(b.offset), r});
  free_bytes_ += b.size;
}

inline void HbmLayout::UnindexFree(Ref r) {
  const Block& b = pool_[r];
  free_index_.Remove(allocator::BinNumForSize(b.size), b.size.value(), IndexPtr(b.offset));
  free_bytes_ -= b.size;
}

// `r` is free and out of the index (its bytes no longer counted as free).
inline HbmLayout::Ref HbmLayout::Carve(Ref r, uint64_t offset, Bytes size, BlockState state, uint64_t owner) {
  const Block was = pool_[r];
  const uint64_t end = offset + size.value();
  const uint64_t was_end = was.offset + was.size.value();
  pool_[r].offset = offset;
  pool_[r].size = size;
  pool_[r].state = state;
  pool_[r].owner = owner;
  if (offset > was.offset) {
    const Ref low =
        NewBlock(Block{was.offset, Bytes(offset - was.offset), BlockState::kFree, 0, was.prev, r});
    (was.prev != kNone ? pool_[was.prev].next : head_) = low;
    pool_[r].prev = low;
    IndexFree(low);
  }
  if (was_end > end) {
    const Ref high = NewBlock(Block{end, Bytes(was_end - end), BlockState::kFree, 0, r, was.next});
    (was.next != kNone ? pool_[was.next].prev : tail_) = high;
    pool_[r].next = high;
    IndexFree(high);
  }
  return r;
}

std::optional<HbmLayout::Ref> HbmLayout::PlaceBestFitTop(Bytes size, BlockState state, uint64_t owner) {
  if (size.is_zero()) return std::nullopt;
  const std::optional<allocator::FreeEntry> best = free_index_.TakeBestFit(size);
  if (!best) return std::nullopt;
  const Ref r = static_cast<Ref>(best->handle);
  free_bytes_ -= pool_[r].size;
  return Carve(r, pool_[r].offset + pool_[r].size.value() - size.value(), size, state, owner);
}

std::optional<HbmLayout::Ref> HbmLayout::PlaceFirstFitBottom(Bytes size, BlockState state, uint64_t owner) {
  if (size.is_zero() || largest_free_block() < size) return std::nullopt;
  for (Ref r = head_; r != kNone; r = pool_[r].next) {
    if (pool_[r].state == BlockState::kFree && pool_[r].size >= size) {
      UnindexFree(r);
      return Carve(r, pool_[r].offset, size, state, owner);
    }
  }
  return std::nullopt;
}

void HbmLayout::Release(Ref r) {
  Ref prev = pool_[r].prev;
  Ref next = pool_[r].next;
  uint64_t start = pool_[r].offset;
  Bytes size = pool_[r].size;
  if (prev != kNone && pool_[prev].state == BlockState::kFree) {
    UnindexFree(prev);
    start = pool_[prev].offset;
    size += pool_[prev].size;
    const Ref below = pool_[prev].prev;
    DeleteBlock(prev);
    prev = below;
  }
  if (next != kNone && pool_[next].state == BlockState::kFree) {
    UnindexFree(next);
    size += pool_[next].size;
    const Ref above = pool_[next].next;
    DeleteBlock(next);
    next = above;
  }
  pool_[r] = Block{start, size, BlockState::kFree, 0, prev, next};
  (prev != kNone ? pool_[prev].next : head_) = r;
  (next != kNone ? pool_[next].prev : tail_) = r;
  IndexFree(r);
}

HbmLayout::Compaction HbmLayout::Compact() {
  Compaction done;
  // A first walk that stops at the first block that would move: a
  // compaction that moves nothing (a retry after an earlier one) then costs
  // part of one walk and leaves the layout and its index alone.
  if (!CompactWalk</*kApply=*/false>(done)) return done;
  free_index_.Clear();  // keeps its blocks: no heap traffic once warm
  free_bytes_ = Bytes(0);
  CompactWalk</*kApply=*/true>(done);
  return done;
}

// PlanCompaction's plan in one walk down the chain. Its "highest fixed block
// below the cursor" is always one the walk has already passed, or it does not
// block: the cursor never drops below the old end of the movable block being
// placed, so a fixed block below that block ends at or below its target. So
// the fixed blocks above the walk are a queue in address order (fixed_[next..]),
// and nothing looks ahead of the walk.
//
// With kApply the new chain is built from the top as the plan settles it:
// every block the cursor passes (a placed movable block, a fixed block with
// the gap above it as a new free block) is linked below the last one, and
// every old free block is deleted when the walk reaches it. A block is
// relinked only after the walk has read its `prev` (moved and fixed blocks
// are above the walk when they are linked), so the old chain below the walk
// stays intact and no Move list or merge is needed.
template <bool kApply>
bool HbmLayout::CompactWalk(Compaction& done) {
  fixed_.clear();
  size_t next_fixed = 0;  // fixed_[next_fixed..]: passed by the walk, not yet by the cursor
  uint64_t cursor = capacity_.value();  // everything above is settled
  Ref built = kNone;                    // the lowest block of the new chain
  const auto link = [&](Ref b) {
    pool_[b].next = built;
    (built != kNone ? pool_[built].prev : tail_) = b;
    built = b;
  };
  const auto link_gap = [&](uint64_t from) {  // [from, cursor) becomes a free block
    if (from == cursor) return;
    const Ref f = NewBlock(Block{from, Bytes(cursor - from), BlockState::kFree, 0, kNone, kNone});
    link(f);
    IndexFree(f);
  };
  const auto fixed_end = [&](Ref f) { return pool_[f].offset + pool_[f].size.value(); };
  const auto pass_fixed = [&] {  // the cursor drops below the highest queued fixed block
    const Ref f = fixed_[next_fixed++];
    if constexpr (kApply) {
      link_gap(fixed_end(f));
      link(f);
    }
    cursor = pool_[f].offset;
  };
  for (Ref r = tail_; r != kNone;) {
    const Ref below = pool_[r].prev;
    const BlockState state = pool_[r].state;
    if (state == BlockState::kFree) {
      if constexpr (kApply) DeleteBlock(r);  // its bytes come back as the gaps
    } else if (state != BlockState::kInUse) {
      fixed_.push_back(r);
    } else {
      const uint64_t size = pool_[r].size.value();
      while (next_fixed < fixed_.size() && fixed_end(fixed_[next_fixed]) > cursor - size) pass_fixed();
      const uint64_t target = cursor - size;
      if (target != pool_[r].offset) {  // (link_gap may grow pool_: no Block& held across it)
        if constexpr (!kApply) return true;
        ++done.blocks_moved;
        done.bytes_moved += size;
        pool_[r].offset = target;
      }
      if constexpr (kApply) link(r);
      cursor = target;
    }
    r = below;
  }
  if constexpr (kApply) {
    while (next_fixed < fixed_.size()) pass_fixed();
    link_gap(0);
    pool_[built].prev = kNone;  // something moved, so the chain is not empty
    head_ = built;
  }
  return false;
}

absl::Status HbmLayout::Check() const {
  uint64_t cursor = 0;
  bool previous_free = false;
  Bytes free_sum;
  size_t free_blocks = 0;
  size_t blocks = 0;
  Ref prev = kNone;
  for (Ref r = head_; r != kNone; prev = r, r = pool_[r].next) {
    const Block& block = pool_[r];
    if (++blocks > pool_.size()) return absl::InternalError("the chain of blocks loops");
    const uint64_t offset = block.offset;
    if (offset != cursor) {
      return absl::InternalError(fmt::format("block at {} does not start at {}", offset, cursor));
    }
    if (block.prev != prev)
      return absl::InternalError(fmt::format("block at {} has a stale prev link", offset));
    if (block.size.is_zero()) return absl::InternalError(fmt::format("empty block at {}", offset));
    const bool is_free = block.state == BlockState::kFree;
    if (is_free && previous_free) {
      return absl::InternalError(
          fmt::format("free block at {} follows a free block (not coalesced)", offset));
    }
    if (is_free) {
      ++free_blocks;
      free_sum += block.size;
      const allocator::FreeEntry* e =
          free_index_.Find(allocator::BinNumForSize(block.size), block.size.value(), IndexPtr(offset));
      if (e == nullptr || e->handle != r) {
        return absl::InternalError(fmt::format("free block at {} ({} B) missing from the best-fit index",
                                               offset, block.size.value()));
      }
    }
    previous_free = is_free;
    cursor = offset + block.size.value();
  }
  if (prev != tail_) return absl::InternalError("the last block is not the layout's top");
  if (cursor != capacity_.value()) {
    return absl::InternalError(
        fmt::format("blocks end at {}, not at the capacity {}", cursor, capacity_.value()));
  }
  if (free_blocks != free_index_.size()) {
    return absl::InternalError(
        fmt::format("best-fit index holds {} entries for {} free blocks", free_index_.size(), free_blocks));
  }
  size_t spares = 0;
  for (Ref r = spare_; r != kNone && spares <= pool_.size(); r = pool_[r].next) ++spares;
  if (spares != spares_ || blocks + spares != pool_.size()) {
    return absl::InternalError(fmt::format("{} blocks in the chain and {} spare slots ({} counted) in a pool of {}",
                                           blocks, spares, spares_, pool_.size()));
  }
  if (free_sum != free_bytes_) {
    return absl::InternalError(
        fmt::format("free_bytes is {} but free blocks sum to {}", free_bytes_.value(), free_sum.value()));
  }
  return free_index_.CheckInvariants();
}

}  // namespace hbmsim::allocator
