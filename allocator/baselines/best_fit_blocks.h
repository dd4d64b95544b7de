// The blocks of best_fit's one region, free and in use, as BFC keeps its
// chunks: records linked in address order, the free ones filed in BFC's bin
// index (allocator/core/bins.h), whose search is exactly the least (size,
// address) among free blocks of at least a size, the textbook best fit.
//
//   records  [ #0 in use | #3 free | #1 in use | #2 free ..................... ]
//   links     0 <-> 3 <-> 1 <-> 2           (prev / next, address order)
//   index     bins of (size, offset, record) for #3 and #2
//
// A take splits the best-fitting free block: the buffer keeps its record (the
// low end) and the rest gets a new one; a release merges the block with its
// free neighbours, found by the links. So neither looks anything up by
// address: FreeRanges (the address-ordered chunks first_fit and paged use)
// located each range by offset, twice per take-and-release, and that search
// was most of best_fit's time on the churn trace.
//
// Invariants (Check):
//   the records linked from #0 (always at offset 0) tile [0, region) in order;
//   no two neighbouring blocks are free (coalescing is eager);
//   the index holds exactly one (size, offset, record) per free block;
//   total() == Σ free sizes, count() == number of free blocks.
#ifndef HBMSIM_ALLOCATOR_BASELINES_BEST_FIT_BLOCKS_H_
#define HBMSIM_ALLOCATOR_BASELINES_BEST_FIT_BLOCKS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/bins.h"

namespace hbmsim::allocator::baselines {

class BestFitBlocks {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  // One free block of the whole region (none for an empty region).
  explicit BestFitBlocks(uint64_t region_size);

  struct Taken {
    uint64_t offset;
    uint32_t block;  // the record to Release
  };
  // The least (size, offset) free block of at least `size` bytes: takes its
  // first `size` bytes, or nullopt.
  std::optional<Taken> TakeBestFit(uint64_t size);
  // Frees a block TakeBestFit returned, merging it with free neighbours.
  void Release(uint32_t block);

  uint64_t Largest() const;
  uint64_t total() const { return total_; }
  uint64_t count() const { return index_.size(); }

  // Calls f(offset, size) for every free block in address order.
  template <typename F>
  void ForEach(F f) const {
    for (uint32_t id = blocks_.empty() ? kNone : 0; id != kNone; id = blocks_[id].next) {
      if (blocks_[id].free) f(blocks_[id].offset, blocks_[id].size);
    }
  }

  absl::Status Check() const;

 private:
  struct Block {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t prev = kNone;
    uint32_t next = kNone;
    bool free = false;
  };

  uint32_t NewBlock();
  void File(uint32_t id, uint64_t offset, uint64_t size) {
    index_.Insert(allocator::BinNumForSize(Bytes(size)), {size, offset, id});
  }
  void Unfile(uint64_t offset, uint64_t size) {
    index_.Remove(allocator::BinNumForSize(Bytes(size)), size, offset);
  }

  uint64_t region_size_;
  std::vector<Block> blocks_;    // by record; #0 is the block at offset 0
  std::vector<uint32_t> spare_;  // records of no block
  allocator::BinIndex index_;
  uint64_t total_ = 0;
};

}  // namespace hbmsim::allocator::baselines

#endif  // HBMSIM_ALLOCATOR_BASELINES_BEST_FIT_BLOCKS_H_
