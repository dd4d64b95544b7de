// The `offline` bound: placement with the whole future known, as XLA's heap
// simulator does it (tpu-and-xla.md §2.1–2.2; docs/what-if.md).
//
// Every buffer is a live interval [start, end) in trace time (the positions of
// its alloc and of its free; a buffer never freed lives to the end) and a size.
// GlobalDecreasingSizeBestFit places buffers one by one in a global order,
// regardless of when they are allocated: for each, it collects the buffers
// already placed whose intervals overlap its own, and takes the smallest free
// gap between them that is large enough (lowest offset on ties), or else the
// top of those buffers. Two orders are run and the smaller heap is kept, as
// XLA's BufferAssigner does with ChooseBestHeapAlgorithm:
//   spatial   decreasing size, then decreasing lifetime
//   temporal  decreasing lifetime, then decreasing size
// (ties: earlier start, then lower key, so plans are deterministic).
//
// PlannerRules::kXla follows XLA's GlobalDecreasingSizeBestFitHeap to the
// letter where hbmsim's own rules differ (docs/formats/xla.md, "offline
// against XLA's assignment"):
//   sizes     not rounded: a chunk is the buffer's own bytes; the next free
//             chunk starts at the previous chunk's end rounded up to the
//             alignment (MakeFreeChunks), and the heap size is the largest
//             unrounded end
//   spatial   decreasing size, then decreasing duration of the group's first
//             value (`first_end`), then increasing key (XLA's value id)
//   temporal  decreasing duration of the whole group, then decreasing size,
//             then increasing key
// Best fit is the same in both: the smallest free chunk that holds the
// buffer, the lower offset on ties, else the top. Intervals are [start, end)
// either way; XLA's inclusive ends are end+1 here.
//
//   offset ▲        ┌────────┐
//          │ ┌──────┤   b2   ├─────┐      b1, b2, b3 overlap in time, so
//          │ │ b1   └────────┘ b3  │      they are stacked; b4 lives after
//          │ └─────────────────────┘┌──┐  b1..b3 and reuses offset 0.
//          └────────────────────────┴b4┴──▶ time
//
// Overlap queries go through a static centered interval tree over all
// intervals (built once), so a query costs O(log n + intervals it meets).
// Memory is proportional to the number of buffers in the trace.
#ifndef HBMSIM_ALLOCATOR_BASELINES_OFFLINE_PLANNER_H_
#define HBMSIM_ALLOCATOR_BASELINES_OFFLINE_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "allocator/core/buffer_interval.h"

namespace hbmsim::allocator {

enum class PlannerRules : uint8_t { kHbmsim, kXla };

enum class PackingOrder : uint8_t { kSpatial, kTemporal };
std::string_view PackingOrderName(PackingOrder o);  // "spatial", "temporal"

struct PlacedBuffer {
  uint64_t key = 0;
  uint64_t offset = 0;
  uint64_t size = 0;  // rounded to the alignment
};

struct OfflinePlan {
  uint64_t heap_size = 0;
  PackingOrder order = PackingOrder::kSpatial;  // the order that won
  uint64_t spatial_heap_size = 0;
  uint64_t temporal_heap_size = 0;
  std::vector<PlacedBuffer> buffers;  // sorted by key

  // The placement of the buffer allocated at event `key`, or nullptr.
  const PlacedBuffer* Find(uint64_t key) const;
};

// One packing order alone (exposed for tests).
OfflinePlan PlanWithOrder(const std::vector<BufferInterval>& intervals, uint64_t alignment,
                          PackingOrder order, PlannerRules rules = PlannerRules::kHbmsim);

// Both orders; keeps the smaller heap (spatial on a tie). `alignment` > 0.
OfflinePlan PlanOffline(const std::vector<BufferInterval>& intervals, uint64_t alignment,
                        PlannerRules rules = PlannerRules::kHbmsim);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BASELINES_OFFLINE_PLANNER_H_
