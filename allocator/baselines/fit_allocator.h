// The `first_fit` and `best_fit` baselines: textbook placement policies over a
// single region of the whole limit, to compare real allocators against.
//
// Model
// -----
// One region [0, floor(limit, alignment)) is held from the start (pool = the
// region). A request is rounded up to `alignment` and placed at the low end of
// a free range chosen by the strategy; a free returns the block and merges it
// with its free neighbours at once (eager coalescing).
//
//   0                                                          region end
//   ┌─────────┬────────┬──────────┬────────┬──────────────────────────┐
//   │ in use  │  free  │  in use  │  free  │           free           │
//   └─────────┴────────┴──────────┴────────┴──────────────────────────┘
//
//   first_fit  the lowest-addressed free range that is large enough
//   best_fit   the smallest free range that is large enough, lowest address
//              on ties: min (size, address), exact (no size classes, no bins)
//
// first_fit keeps its free ranges in FreeRanges (address-ordered chunks under
// a max tree: a first fit descends it); best_fit keeps every block in
// BestFitBlocks (records linked in address order, the free ones in BFC's bin
// index: a best fit is one search there and a free finds its neighbours by
// the links). A handle is the block's offset for first_fit and its
// BestFitBlocks record for best_fit, so best_fit's free is an index.
//
// Invariants (CheckInvariants):
//   blocks tile the region (shared oracle);  bytes_in_use == Σ live sizes;
//   free ranges are disjoint and never adjacent;
//   Σ free + Σ live == region size;  every offset and size ≡ 0 (mod alignment).
// Failure: free_bytes = region − in use; largest_free_block = largest range.
#ifndef HBMSIM_ALLOCATOR_BASELINES_FIT_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BASELINES_FIT_ALLOCATOR_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "allocator/baselines/best_fit_blocks.h"
#include "allocator/baselines/free_ranges.h"
#include "allocator/baselines/fixed_pool_allocator.h"

namespace hbmsim::allocator {

enum class FitStrategy : uint8_t { kFirstFit, kBestFit };

struct FitOptions {
  Bytes memory_limit;
  uint64_t alignment = 256;  // > 0
  FitStrategy strategy = FitStrategy::kFirstFit;
};

class FitAllocator final : public baselines::FixedPoolAllocator {
 public:
  explicit FitAllocator(const FitOptions& options);

  std::string_view name() const override;
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  AllocatorStats GetStats() const override;
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  absl::Status CheckInvariants() const override;

 private:
  struct Block {
    uint64_t size = 0;
    uint64_t requested = 0;
    uint64_t id = 0;
    uint64_t stream = 0;
    uint64_t offset = 0;
    bool live = false;
  };

  bool best() const { return options_.strategy == FitStrategy::kBestFit; }

  FitOptions options_;
  uint64_t region_size_;
  baselines::FreeRanges free_;     // first_fit's free ranges (empty for best_fit)
  baselines::BestFitBlocks best_;  // best_fit's blocks (empty for first_fit)
  // first_fit: offset -> block; the handle is the offset. Looked up only: the walk sorts.
  absl::flat_hash_map<uint64_t, Block> live_;
  // best_fit: the block of each record of best_; the handle is the record, so
  // a free is an index, not a hash lookup (a twelfth of a churn replay).
  std::vector<Block> by_record_;
  uint64_t live_blocks_ = 0;
  // Calls f(block) for every live block, in no particular order.
  template <typename F>
  void ForEachLive(F f) const {
    if (best()) {
      for (const Block& b : by_record_) {
        if (b.live) f(b);
      }
    } else {
      for (const auto& [offset, b] : live_) f(b);
    }
  }
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BASELINES_FIT_ALLOCATOR_H_
