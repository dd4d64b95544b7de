// The `offline` bound: placement with the whole future known, as XLA's heap
// simulator does it (shared/reference/tpu-and-xla.md §2.1–2.2).
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

namespace hbmsim {

struct BufferInterval {
  uint64_t key = 0;    // the alloc's event index: how the replay finds the buffer again
  uint64_t size = 0;   // requested bytes (> 0)
  uint64_t start = 0;  // alloc position
  uint64_t end = 0;    // free position (exclusive); UINT64_MAX when never freed
};

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
                          PackingOrder order);

// Both orders; keeps the smaller heap (spatial on a tie). `alignment` > 0.
OfflinePlan PlanOffline(const std::vector<BufferInterval>& intervals, uint64_t alignment);

}  // namespace hbmsim

#endif  // HBMSIM_ALLOCATOR_BASELINES_OFFLINE_PLANNER_H_
