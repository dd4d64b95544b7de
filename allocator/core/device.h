// The simulated device behind every policy: it hands out address ranges at
// increasing addresses starting at 0 and never reuses a range, so placements
// are reproducible numbers. Capacity is the policy's business (its limit);
// the device itself never refuses.
#ifndef HBMSIM_ALLOCATOR_CORE_DEVICE_H_
#define HBMSIM_ALLOCATOR_CORE_DEVICE_H_

#include "allocator/core/units.h"

namespace hbmsim::allocator {

class SimulatedDevice {
 public:
  // The next range of `size` bytes, directly after the previous one.
  Offset Reserve(Bytes size) {
    const Offset base = next_;
    next_ = next_ + size;
    return base;
  }
  // Where the next Reserve() will start (lets a policy know whether a new range
  // will be adjacent to one it holds, for in-place region growth).
  Offset next_address() const { return next_; }
  // Where the next Reserve() starts, set by a policy cloned at another limit
  // whose ranges that limit sizes (torch's expandable segments): its device
  // has handed out the same ranges, each of the other size.
  void set_next_address(Offset next) { next_ = next; }

 private:
  Offset next_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_DEVICE_H_
