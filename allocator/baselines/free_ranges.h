// Free address ranges of one region, kept in address order with eager
// coalescing, plus an optional (size, address) index for best fit. Used by
// the first_fit and paged (virtual address space) baselines; best_fit moved to
// BestFitBlocks (best_fit_blocks.h), which finds neighbours by links instead
// of by offset. The size index stays: the tests hold both to one oracle.
//
// Layout: the ranges, in address order, are cut into chunks of at most
// kChunkRanges sorted entries; a max tree over the chunks (in address order)
// holds each chunk's largest range, so a first fit descends the tree to the
// lowest chunk holding a range that is large enough and scans only that chunk.
//
//   firsts   [ 0     | 9000   | 70000 ]   first offset of each chunk: Locate
//   chunks   [ r r r | r r r r| r r   ]   ranges by address, <= kChunkRanges
//   tree          max(max(c0, c1), max(c2, -))       leaves: chunk maxima
//
// A std::map (the previous form) scanned every range below the first fit
// (O(n) per allocation) and paid a node per range. Most operations here change
// one range in place (a take from a range's front, a release that extends a
// neighbour), which keeps its chunk's order; only a new range or a vanished
// one shifts entries, and a chunk splits, merges or empties (rebuilding the
// O(chunks) tree) at most once per kChunkRanges/4 such operations on it.
//
// The size index, when kept, is BFC's bin index (allocator/core/bins.h): its
// search is the global minimum of (size, address) over entries >= a size,
// which is exactly the textbook best fit.
//
// Invariants (Check verifies them):
//   ranges are disjoint, non-empty and never adjacent (coalescing is eager);
//   only a sole chunk may be empty; firsts[p] == first offset of chunk p;
//   every tree node == max of its children, every leaf == its chunk's largest;
//   the size index, when kept, holds exactly one (size, address) per range.
#ifndef HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_
#define HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/bins.h"

namespace hbmsim::allocator::baselines {

class FreeRanges {
 public:
  static constexpr uint32_t kChunkRanges = 32;

  explicit FreeRanges(bool index_by_size);

  // Returns [offset, offset+size) to the free set, merging with neighbours.
  void Release(uint64_t offset, uint64_t size);
  // Takes [offset, offset+size) out of the free range that contains it.
  void Take(uint64_t offset, uint64_t size);

  // The lowest-addressed range of at least `size` bytes (first fit): takes
  // its first `size` bytes and returns their offset, or nullopt.
  std::optional<uint64_t> TakeFirstFit(uint64_t size);
  // The smallest range of at least `size` bytes, lowest address on ties
  // (requires the size index): takes its first `size` bytes, or nullopt.
  std::optional<uint64_t> TakeBestFit(uint64_t size);

  uint64_t Largest() const { return tree_[1]; }
  uint64_t total() const { return total_; }
  uint64_t count() const { return ranges_; }

  // Calls f(offset, size) for every range in address order.
  template <typename F>
  void ForEach(F f) const {
    for (const uint32_t id : order_) {
      const Chunk& c = chunks_[id];
      for (uint32_t i = 0; i < c.count; ++i) f(c.ranges[i].offset, c.ranges[i].size);
    }
  }

  absl::Status Check() const;

 private:
  struct Range {
    uint64_t offset;
    uint64_t size;
  };
  struct Chunk {
    uint32_t count = 0;
    Range ranges[kChunkRanges];
  };

  Chunk& At(uint32_t p) { return chunks_[order_[p]]; }
  const Chunk& At(uint32_t p) const { return chunks_[order_[p]]; }
  // The position of the last chunk whose first offset is <= offset (or 0).
  uint32_t Locate(uint64_t offset) const;
  // How many ranges of `c` start below `offset`.
  static uint32_t CountBelow(const Chunk& c, uint64_t offset);

  // Range (p, i) becomes `r` (same place in the address order). `indexed`:
  // whether the size index still holds the old range (a best fit took it).
  void Set(uint32_t p, uint32_t i, Range r, bool indexed = true);
  void InsertAt(uint32_t p, uint32_t i, Range r);
  void RemoveAt(uint32_t p, uint32_t i, bool indexed = true);
  // Takes `size` bytes from the front of range (p, i); returns their offset.
  uint64_t TakeFront(uint32_t p, uint32_t i, uint64_t size, bool indexed = true);

  void IndexInsert(Range r);
  void IndexRemove(Range r);

  // Chunk p changed its ranges: its leaf and the maxima above it.
  void Refresh(uint32_t p);
  void SplitChunk(uint32_t p);
  void MergeSmallChunk(uint32_t p);
  uint32_t NewChunk();
  // After chunks were added or removed: firsts and the whole tree.
  void Rebuild();

  bool index_by_size_;
  std::vector<Chunk> chunks_;     // storage by id; an id stays put while used
  std::vector<uint32_t> spare_;   // ids of unused chunks
  std::vector<uint32_t> order_;   // chunk ids in address order; never empty
  std::vector<uint64_t> firsts_;  // first offset per position (unused for an empty sole chunk)
  std::vector<uint64_t> tree_;    // max tree: node n's children 2n, 2n+1; leaves from leaves_
  uint32_t leaves_ = 1;
  std::unique_ptr<allocator::BinIndex> by_size_;
  uint64_t total_ = 0;
  uint64_t ranges_ = 0;
};

}  // namespace hbmsim::allocator::baselines

#endif  // HBMSIM_ALLOCATOR_BASELINES_FREE_RANGES_H_
