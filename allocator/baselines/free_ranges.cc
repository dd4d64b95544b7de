#include "allocator/baselines/free_ranges.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "fmt/format.h"

namespace hbmsim::allocator::baselines {
namespace {

// Below this many ranges a chunk that lost one is merged with (or refilled
// from) a neighbour, so chunks stay at least a quarter full and their number
// O(ranges / kChunkRanges).
constexpr uint32_t kLowWater = FreeRanges::kChunkRanges / 4;
constexpr uint32_t kMergedAtMost = FreeRanges::kChunkRanges * 3 / 4;

}  // namespace

FreeRanges::FreeRanges(bool index_by_size) : index_by_size_(index_by_size) {
  if (index_by_size_) by_size_ = std::make_unique<allocator::BinIndex>();
  order_.push_back(NewChunk());
  Rebuild();
}

uint32_t FreeRanges::NewChunk() {
  if (!spare_.empty()) {
    const uint32_t id = spare_.back();
    spare_.pop_back();
    chunks_[id].count = 0;
    return id;
  }
  chunks_.emplace_back();
  return static_cast<uint32_t>(chunks_.size() - 1);
}

uint32_t FreeRanges::Locate(uint64_t offset) const {
  if (order_.size() == 1) return 0;
  // Position 0 is the answer for anything below the second chunk's first.
  const auto past = std::upper_bound(firsts_.begin() + 1, firsts_.end(), offset);
  return static_cast<uint32_t>(past - firsts_.begin()) - 1;
}

uint32_t FreeRanges::CountBelow(const Chunk& c, uint64_t offset) {
  if (c.count == 0) return 0;
  // Halving by conditional moves: the comparisons follow the trace.
  const Range* base = c.ranges;
  for (uint32_t n = c.count; n > 1;) {
    const uint32_t half = n / 2;
    base = base[half].offset < offset ? base + half : base;
    n -= half;
  }
  return static_cast<uint32_t>(base - c.ranges) + (base->offset < offset ? 1 : 0);
}

void FreeRanges::IndexInsert(Range r) {
  if (by_size_) by_size_->Insert(allocator::BinNumForSize(Bytes(r.size)), {r.size, r.offset, 0});
}

void FreeRanges::IndexRemove(Range r) {
  if (by_size_) by_size_->Remove(allocator::BinNumForSize(Bytes(r.size)), r.size, r.offset);
}

void FreeRanges::Refresh(uint32_t p) {
  const Chunk& c = At(p);
  uint64_t largest = 0;
  for (uint32_t i = 0; i < c.count; ++i) largest = std::max(largest, c.ranges[i].size);
  uint32_t n = leaves_ + p;
  tree_[n] = largest;
  for (n /= 2; n >= 1; n /= 2) {
    const uint64_t v = std::max(tree_[2 * n], tree_[2 * n + 1]);
    if (tree_[n] == v) break;  // the ancestors saw no change either
    tree_[n] = v;
  }
}

void FreeRanges::Rebuild() {
  const uint32_t chunks = static_cast<uint32_t>(order_.size());
  firsts_.resize(chunks);
  leaves_ = std::bit_ceil(chunks);
  tree_.assign(2 * size_t{leaves_}, 0);
  for (uint32_t p = 0; p < chunks; ++p) {
    const Chunk& c = At(p);
    firsts_[p] = c.count > 0 ? c.ranges[0].offset : 0;
    uint64_t largest = 0;
    for (uint32_t i = 0; i < c.count; ++i) largest = std::max(largest, c.ranges[i].size);
    tree_[leaves_ + p] = largest;
  }
  for (uint32_t n = leaves_ - 1; n >= 1; --n) tree_[n] = std::max(tree_[2 * n], tree_[2 * n + 1]);
}

void FreeRanges::Set(uint32_t p, uint32_t i, Range r, bool indexed) {
  Range& slot = At(p).ranges[i];
  if (indexed) IndexRemove(slot);
  IndexInsert(r);
  const uint64_t old = slot.size;
  slot = r;
  if (i == 0) firsts_[p] = r.offset;
  const uint64_t leaf = tree_[leaves_ + p];
  if (r.size > leaf || (r.size < old && old == leaf)) Refresh(p);
}

void FreeRanges::InsertAt(uint32_t p, uint32_t i, Range r) {
  if (At(p).count == kChunkRanges) {
    SplitChunk(p);
    if (i > At(p).count) {
      i -= At(p).count;
      ++p;
    }
  }
  Chunk& c = At(p);
  std::memmove(&c.ranges[i + 1], &c.ranges[i], (c.count - i) * sizeof(Range));
  c.ranges[i] = r;
  ++c.count;
  ++ranges_;
  if (i == 0) firsts_[p] = r.offset;
  IndexInsert(r);
  if (r.size > tree_[leaves_ + p]) Refresh(p);
}

void FreeRanges::RemoveAt(uint32_t p, uint32_t i, bool indexed) {
  Chunk& c = At(p);
  const Range r = c.ranges[i];
  if (indexed) IndexRemove(r);
  --ranges_;
  --c.count;
  std::memmove(&c.ranges[i], &c.ranges[i + 1], (c.count - i) * sizeof(Range));
  if (order_.size() > 1 && c.count < kLowWater) {
    MergeSmallChunk(p);  // rebuilds: firsts and maxima are fresh
    return;
  }
  if (i == 0 && c.count > 0) firsts_[p] = c.ranges[0].offset;
  if (r.size == tree_[leaves_ + p]) Refresh(p);
}

void FreeRanges::SplitChunk(uint32_t p) {
  const uint32_t id = NewChunk();  // may move chunks_: no references across it
  Chunk& full = At(p);
  Chunk& upper = chunks_[id];
  const uint32_t keep = full.count / 2;
  upper.count = full.count - keep;
  std::memcpy(upper.ranges, full.ranges + keep, upper.count * sizeof(Range));
  full.count = keep;
  order_.insert(order_.begin() + p + 1, id);
  Rebuild();
}

// Chunk p fell under kLowWater ranges: an empty one goes; else it merges with
// a neighbour when both fit in kMergedAtMost, or takes half of their ranges.
void FreeRanges::MergeSmallChunk(uint32_t p) {
  const uint32_t a = p + 1 < order_.size() ? p : p - 1;  // the pair (a, a + 1)
  Chunk& low = At(a);
  Chunk& high = At(a + 1);
  const uint32_t sum = low.count + high.count;
  if (sum <= kMergedAtMost) {
    std::memcpy(low.ranges + low.count, high.ranges, high.count * sizeof(Range));
    low.count = sum;
    spare_.push_back(order_[a + 1]);
    order_.erase(order_.begin() + a + 1);
  } else {
    Range all[2 * kChunkRanges];
    std::memcpy(all, low.ranges, low.count * sizeof(Range));
    std::memcpy(all + low.count, high.ranges, high.count * sizeof(Range));
    low.count = sum / 2;
    high.count = sum - low.count;
    std::memcpy(low.ranges, all, low.count * sizeof(Range));
    std::memcpy(high.ranges, all + low.count, high.count * sizeof(Range));
  }
  Rebuild();
}

uint64_t FreeRanges::TakeFront(uint32_t p, uint32_t i, uint64_t size, bool indexed) {
  const Range r = At(p).ranges[i];
  total_ -= size;
  if (r.size == size) {
    RemoveAt(p, i, indexed);
  } else {
    Set(p, i, {r.offset + size, r.size - size}, indexed);
  }
  return r.offset;
}

void FreeRanges::Release(uint64_t offset, uint64_t size) {
  total_ += size;
  const uint32_t p = Locate(offset);
  const Chunk& c = At(p);
  const uint32_t j = CountBelow(c, offset);  // the previous range, if any, is j - 1 here
  const bool prev_adjacent = j > 0 && c.ranges[j - 1].offset + c.ranges[j - 1].size == offset;
  uint32_t np = p, ni = j;  // the next range: here, or first of the next chunk
  if (j == c.count) {
    np = p + 1;
    ni = 0;
  }
  const bool next_adjacent =
      np < order_.size() && ni < At(np).count && At(np).ranges[ni].offset == offset + size;
  if (prev_adjacent) {
    const Range prev = c.ranges[j - 1];
    const uint64_t next_size = next_adjacent ? At(np).ranges[ni].size : 0;
    Set(p, j - 1, {prev.offset, prev.size + size + next_size});
    if (next_adjacent) RemoveAt(np, ni);  // positions hold: Set moved nothing
  } else if (next_adjacent) {
    Set(np, ni, {offset, size + At(np).ranges[ni].size});
  } else {
    InsertAt(p, j, {offset, size});
  }
}

void FreeRanges::Take(uint64_t offset, uint64_t size) {
  const uint32_t p = Locate(offset);
  // The range containing offset: the last one starting at or below it.
  const uint32_t i = CountBelow(At(p), offset + 1) - 1;
  const Range r = At(p).ranges[i];
  if (r.offset == offset) {
    TakeFront(p, i, size);
    return;
  }
  total_ -= size;
  const uint64_t end = r.offset + r.size;
  Set(p, i, {r.offset, offset - r.offset});
  if (offset + size < end) InsertAt(p, i + 1, {offset + size, end - (offset + size)});
}

std::optional<uint64_t> FreeRanges::TakeFirstFit(uint64_t size) {
  if (ranges_ == 0 || tree_[1] < size) return std::nullopt;
  uint32_t n = 1;
  while (n < leaves_) n = tree_[2 * n] >= size ? 2 * n : 2 * n + 1;
  const uint32_t p = n - leaves_;
  const Chunk& c = At(p);
  uint32_t i = 0;
  while (c.ranges[i].size < size) ++i;  // the leaf says one fits
  return TakeFront(p, i, size);
}

std::optional<uint64_t> FreeRanges::TakeBestFit(uint64_t size) {
  const std::optional<allocator::FreeEntry> e = by_size_->TakeBestFit(Bytes(size));
  if (!e) return std::nullopt;
  const uint32_t p = Locate(e->ptr);
  const uint32_t i = CountBelow(At(p), e->ptr);
  return TakeFront(p, i, size, /*indexed=*/false);  // the index already let go of it
}

absl::Status FreeRanges::Check() const {
  if (order_.empty() || firsts_.size() != order_.size()) {
    return absl::InternalError(fmt::format("{} chunks but {} first offsets", order_.size(), firsts_.size()));
  }
  uint64_t sum = 0, count = 0;
  std::optional<uint64_t> prev_end;
  for (uint32_t p = 0; p < order_.size(); ++p) {
    const Chunk& c = At(p);
    if (c.count == 0 && order_.size() > 1) return absl::InternalError(fmt::format("chunk {} is empty", p));
    if (c.count > 0 && firsts_[p] != c.ranges[0].offset) {
      return absl::InternalError(
          fmt::format("chunk {} starts at {}, not {}", p, c.ranges[0].offset, firsts_[p]));
    }
    uint64_t largest = 0;
    for (uint32_t i = 0; i < c.count; ++i) {
      const auto [offset, length] = c.ranges[i];
      if (length == 0) return absl::InternalError(fmt::format("empty free range at {}", offset));
      if (prev_end && *prev_end >= offset) {
        return absl::InternalError(
            fmt::format("free range at {} overlaps or touches the one before", offset));
      }
      if (by_size_ && by_size_->Find(allocator::BinNumForSize(Bytes(length)), length, offset) == nullptr) {
        return absl::InternalError(fmt::format("free range at {} is missing from the size index", offset));
      }
      prev_end = offset + length;
      sum += length;
      largest = std::max(largest, length);
    }
    count += c.count;
    if (tree_[leaves_ + p] != largest) {
      return absl::InternalError(
          fmt::format("chunk {} holds {} at most, its leaf says {}", p, largest, tree_[leaves_ + p]));
    }
  }
  for (uint32_t n = leaves_ - 1; n >= 1; --n) {
    if (tree_[n] != std::max(tree_[2 * n], tree_[2 * n + 1])) {
      return absl::InternalError(fmt::format("max tree node {} is stale", n));
    }
  }
  if (by_size_ && by_size_->size() != count) {
    return absl::InternalError(
        fmt::format("size index holds {} ranges, address index {}", by_size_->size(), count));
  }
  if (count != ranges_) return absl::InternalError(fmt::format("{} ranges counted as {}", count, ranges_));
  if (sum != total_)
    return absl::InternalError(fmt::format("free total is {} but ranges sum to {}", total_, sum));
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator::baselines
