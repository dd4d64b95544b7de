// The replay side of the `offline` bound: an Allocator that places every
// buffer where an OfflinePlan (offline_planner.h) put it. The plan was made
// from the same trace in a first pass, so a buffer is found by the event
// index of its alloc. A request fits when its planned block ends within the
// limit; the smallest limit at which the whole trace fits is the plan's heap
// size.
//
// Model
// -----
// One region [0, limit). Live blocks sit at their planned offsets (the plan
// guarantees that buffers live at the same time never overlap); the gaps
// between them are free.
//
// Invariants: blocks tile the region (shared oracle); live blocks are
// disjoint and end within the limit; bytes_in_use == Σ live sizes.
// Failure: free_bytes = limit − in use; largest_free_block = largest gap; a
// request the plan does not know (a different trace) fails as `oom` with
// nothing free, never silently.
#ifndef HBMSIM_ALLOCATOR_BASELINES_OFFLINE_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BASELINES_OFFLINE_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>

#include "allocator/baselines/offline_planner.h"
#include "allocator/baselines/fixed_pool_allocator.h"

namespace hbmsim::allocator {

class OfflineAllocator final : public baselines::FixedPoolAllocator {
 public:
  // The plan is shared read-only by every trial that replays it.
  OfflineAllocator(std::shared_ptr<const OfflinePlan> plan, Bytes memory_limit);

  std::string_view name() const override { return "offline"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  AllocatorStats GetStats() const override;
  void AppendCounters(Counters& out) const override;  // heap sizes of both orders
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  absl::Status CheckInvariants() const override;

 private:
  struct Block {
    uint64_t size = 0;
    uint64_t requested = 0;
    uint64_t id = 0;
    uint64_t stream = 0;
  };

  uint64_t LargestGap() const;

  std::shared_ptr<const OfflinePlan> plan_;
  Bytes limit_;
  std::map<uint64_t, Block> live_;  // offset -> block; the handle is the offset
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BASELINES_OFFLINE_ALLOCATOR_H_
