// The `ideal` bound: an allocator that fits a request whenever the bytes the
// live buffers requested, this one included, stay within the limit. No
// rounding, no placement constraint: the bound no allocator can beat (XLA's
// NoFragmentationStatsHeap, tpu-and-xla.md §2.2), so its
// minimum limit is exactly the trace's peak live bytes.
//
// Model
// -----
// A perfectly compacting heap: after every free the live blocks slide down,
// so they always sit back to back in allocation order from address 0, and the
// rest of the limit is one free block. A new block is placed at the end of the
// compacted live data (its offset is the live bytes before it).
//
//   0                       live                               limit
//   ┌──────┬──────────┬─────┬───────────────────────────────────┐
//   │ id 3 │   id 7   │id 9 │               free                │
//   └──────┴──────────┴─────┴───────────────────────────────────┘
//
// Invariants: blocks tile [0, limit) (shared oracle); bytes_in_use ==
// Σ requested of live blocks <= limit; largest free block == limit − in use.
#ifndef HBMSIM_ALLOCATOR_BASELINES_IDEAL_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BASELINES_IDEAL_ALLOCATOR_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "allocator/baselines/fixed_pool_allocator.h"

namespace hbmsim::allocator {

class IdealAllocator final : public baselines::FixedPoolAllocator {
 public:
  explicit IdealAllocator(Bytes memory_limit);

  std::string_view name() const override { return "ideal"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  AllocatorStats GetStats() const override;
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  absl::Status CheckInvariants() const override;

 private:
  struct Block {
    uint64_t size = 0;
    uint64_t id = 0;
    uint64_t stream = 0;
  };

  Bytes limit_;
  uint64_t next_handle_ = 0;                   // allocation order, which is also address order
  absl::flat_hash_map<uint64_t, Block> live_;  // handle -> block; looked up only: the walk sorts
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BASELINES_IDEAL_ALLOCATOR_H_
