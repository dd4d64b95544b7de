// The live interval of one buffer in a trace: what a policy that plans from
// the whole trace first (the offline lower bound, allocator/baselines/
// offline_planner.h) is given, and what sim/scenario computes for it without
// knowing which policy asks.
#ifndef HBMSIM_ALLOCATOR_CORE_BUFFER_INTERVAL_H_
#define HBMSIM_ALLOCATOR_CORE_BUFFER_INTERVAL_H_

#include <cstdint>

namespace hbmsim::allocator {

struct BufferInterval {
  uint64_t key = 0;    // the alloc's event index: how the replay finds the buffer again
  uint64_t size = 0;   // requested bytes (> 0)
  uint64_t start = 0;  // alloc position
  uint64_t end = 0;    // free position (exclusive); UINT64_MAX when never freed
  // kXla only: where the first value of an aliased group ends (exclusive);
  // XLA's spatial order sorts by that value's duration alone. 0: `end`.
  uint64_t first_end = 0;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_BUFFER_INTERVAL_H_
