#include "allocator/baselines/best_fit_blocks.h"

#include "allocator/core/block_records.h"
#include "fmt/format.h"

namespace hbmsim::allocator::baselines {

BestFitBlocks::BestFitBlocks(uint64_t region_size) : region_size_(region_size) {
  if (region_size == 0) return;
  blocks_.push_back(Block{0, region_size, kNone, kNone, true});
  File(0, 0, region_size);
  total_ = region_size;
}

uint32_t BestFitBlocks::NewBlock() { return NewBlockRecord(blocks_, spare_); }

std::optional<BestFitBlocks::Taken> BestFitBlocks::TakeBestFit(uint64_t size) {
  const std::optional<allocator::FreeEntry> e = index_.TakeBestFit(Bytes(size));
  if (!e) return std::nullopt;
  const uint32_t id = static_cast<uint32_t>(e->handle);
  total_ -= size;
  if (e->size > size) {
    // The rest is a new record after this one. Its extent comes from the
    // entry (registers), not from the record about to be written.
    const uint32_t rest = NewBlock();  // may grow blocks_: no references before it
    Block& b = blocks_[id];
    Block& r = blocks_[rest];
    r = Block{e->ptr + size, e->size - size, id, b.next, true};
    if (b.next != kNone) blocks_[b.next].prev = rest;
    b.next = rest;
    b.size = size;
    File(rest, e->ptr + size, e->size - size);
  }
  blocks_[id].free = false;
  return Taken{e->ptr, id};
}

void BestFitBlocks::Release(uint32_t id) {
  Block& b = blocks_[id];
  uint64_t offset = b.offset;
  uint64_t size = b.size;
  total_ += size;
  b.free = true;
  if (b.next != kNone && blocks_[b.next].free) {
    const uint32_t next = b.next;
    const Block& n = blocks_[next];
    Unfile(n.offset, n.size);
    size += n.size;
    b.next = n.next;
    if (b.next != kNone) blocks_[b.next].prev = id;
    spare_.push_back(next);
  }
  if (b.prev != kNone && blocks_[b.prev].free) {
    const uint32_t prev = b.prev;
    Block& p = blocks_[prev];
    Unfile(p.offset, p.size);
    offset = p.offset;
    size += p.size;
    p.next = b.next;
    if (p.next != kNone) blocks_[p.next].prev = prev;
    spare_.push_back(id);
    id = prev;
  }
  blocks_[id].size = size;
  File(id, offset, size);
}

uint64_t BestFitBlocks::Largest() const {
  const std::optional<allocator::FreeEntry> e = index_.Largest();
  return e ? e->size : 0;
}

absl::Status BestFitBlocks::Check() const {
  if (absl::Status s = index_.CheckInvariants(); !s.ok()) return s;
  uint64_t at = 0, free_bytes = 0, free_blocks = 0, records = 0;
  bool previous_free = false;
  for (uint32_t id = blocks_.empty() ? kNone : 0, prev = kNone; id != kNone; prev = id, id = blocks_[id].next) {
    const Block& b = blocks_[id];
    ++records;
    if (b.offset != at || b.prev != prev || b.size == 0) {
      return absl::InternalError(fmt::format("block #{} at {} of {} bytes does not follow the one ending at {}",
                                             id, b.offset, b.size, at));
    }
    if (b.free && previous_free) {
      return absl::InternalError(fmt::format("free block at {} follows a free block", b.offset));
    }
    if (b.free) {
      const allocator::FreeEntry* e = index_.Find(allocator::BinNumForSize(Bytes(b.size)), b.size, b.offset);
      if (e == nullptr || e->handle != id) {
        return absl::InternalError(fmt::format("free block at {} is missing from the size index", b.offset));
      }
      free_bytes += b.size;
      ++free_blocks;
    }
    previous_free = b.free;
    at += b.size;
  }
  if (at != region_size_) return absl::InternalError(fmt::format("blocks end at {}, not {}", at, region_size_));
  if (records + spare_.size() != blocks_.size()) {
    return absl::InternalError(
        fmt::format("{} records, {} linked, {} spare", blocks_.size(), records, spare_.size()));
  }
  if (free_blocks != index_.size()) {
    return absl::InternalError(fmt::format("{} free blocks but the index holds {}", free_blocks, index_.size()));
  }
  if (free_bytes != total_) {
    return absl::InternalError(fmt::format("free total is {} but free blocks sum to {}", total_, free_bytes));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator::baselines
