#include "allocator/tpu/hbm_layout.h"

#include "fmt/format.h"

namespace hbmsim {

HbmLayout::HbmLayout(Bytes capacity) : capacity_(capacity), free_index_(std::make_unique<bfc::BinIndex>()) {
  if (capacity.is_zero()) return;
  head_ = tail_ = NewBlock(Block{0, capacity, BlockState::kFree, 0, kNone, kNone});
  IndexFree(head_);
}

HbmLayout::HbmLayout(const HbmLayout& other) { *this = other; }

HbmLayout& HbmLayout::operator=(const HbmLayout& other) {
  if (this == &other) return *this;
  capacity_ = other.capacity_;
  pool_ = other.pool_;
  spare_ = other.spare_;
  head_ = other.head_;
  tail_ = other.tail_;
  free_index_ = std::make_unique<bfc::BinIndex>();
  free_bytes_ = Bytes(0);
  for (Ref r = head_; r != kNone; r = pool_[r].next) {
    if (pool_[r].state == BlockState::kFree) IndexFree(r);
  }
  return *this;
}

Bytes HbmLayout::largest_free_block() const {
  const std::optional<bfc::FreeEntry> e = free_index_->Largest();
  return e ? Bytes(e->size) : Bytes(0);
}

Bytes HbmLayout::FreeBlockAbove(Ref below) const {
  const Ref r = below == kNone ? head_ : pool_[below].next;
  if (r == kNone || pool_[r].state != BlockState::kFree) return Bytes(0);
  return pool_[r].size;
}

HbmLayout::Ref HbmLayout::NewBlock(const Block& b) {
  if (!spare_.empty()) {
    const Ref r = spare_.back();
    spare_.pop_back();
    pool_[r] = b;
    return r;
  }
  pool_.push_back(b);
  return static_cast<Ref>(pool_.size() - 1);
}

void HbmLayout::DeleteBlock(Ref r) { spare_.push_back(r); }

void HbmLayout::IndexFree(Ref r) {
  const Block& b = pool_[r];
  free_index_->Insert(bfc::BinNumForSize(b.size), {b.size.value(), IndexPtr(b.offset), r});
  free_bytes_ += b.size;
}

void HbmLayout::UnindexFree(Ref r) {
  const Block& b = pool_[r];
  free_index_->Remove(bfc::BinNumForSize(b.size), b.size.value(), IndexPtr(b.offset));
  free_bytes_ -= b.size;
}

// `r` is free and out of the index (its bytes no longer counted as free).
HbmLayout::Ref HbmLayout::Carve(Ref r, uint64_t offset, Bytes size, BlockState state, uint64_t owner) {
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
  const std::optional<bfc::FreeEntry> best = free_index_->TakeBestFit(size);
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

void HbmLayout::Relocate(const std::vector<Move>& moves) {
  // Held blocks from the top down: those that move (in plan order, so their
  // targets descend) and those that stay (their offsets descend). Merged by
  // new offset they are the new layout, top down, with no sort.
  kept_.clear();
  size_t next_move = 0;
  for (Ref r = tail_; r != kNone; r = pool_[r].prev) {
    if (pool_[r].state == BlockState::kFree) {
      DeleteBlock(r);  // every free block is rebuilt below
    } else if (next_move < moves.size() && moves[next_move].block == r) {
      ++next_move;
    } else {
      kept_.push_back({r, pool_[r].offset});
    }
  }
  relinked_.resize(moves.size() + kept_.size());
  std::merge(moves.begin(), moves.end(), kept_.begin(), kept_.end(), relinked_.begin(),
             [](const Move& a, const Move& b) { return a.to > b.to; });
  free_index_->Clear();
  free_bytes_ = Bytes(0);
  head_ = tail_ = kNone;
  const auto append = [&](Ref r) {
    pool_[r].prev = tail_;
    pool_[r].next = kNone;
    (tail_ != kNone ? pool_[tail_].next : head_) = r;
    tail_ = r;
  };
  const auto append_free = [&](uint64_t from, uint64_t to) {
    const Ref f = NewBlock(Block{from, Bytes(to - from), BlockState::kFree, 0, kNone, kNone});
    append(f);
    IndexFree(f);
  };
  uint64_t cursor = 0;
  for (auto it = relinked_.rbegin(); it != relinked_.rend(); ++it) {
    if (it->to > cursor) append_free(cursor, it->to);
    pool_[it->block].offset = it->to;
    append(it->block);
    cursor = it->to + pool_[it->block].size.value();
  }
  if (capacity_.value() > cursor) append_free(cursor, capacity_.value());
}

absl::Status HbmLayout::Check() const {
  uint64_t cursor = 0;
  bool previous_free = false;
  Bytes free_sum;
  size_t free_blocks = 0;
  Ref prev = kNone;
  for (Ref r = head_; r != kNone; prev = r, r = pool_[r].next) {
    const Block& block = pool_[r];
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
      const bfc::FreeEntry* e =
          free_index_->Find(bfc::BinNumForSize(block.size), block.size.value(), IndexPtr(offset));
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
  if (free_blocks != free_index_->size()) {
    return absl::InternalError(
        fmt::format("best-fit index holds {} entries for {} free blocks", free_index_->size(), free_blocks));
  }
  if (free_sum != free_bytes_) {
    return absl::InternalError(
        fmt::format("free_bytes is {} but free blocks sum to {}", free_bytes_.value(), free_sum.value()));
  }
  return free_index_->CheckInvariants();
}

}  // namespace hbmsim
