// A copy of an allocator's memory map (regions and their blocks), taken
// through WalkMemoryMap, so dump formatters can look at neighbours and sort
// without knowing any policy's internals.
#ifndef HBMSIM_SIM_DUMPS_MEMORY_SNAPSHOT_H_
#define HBMSIM_SIM_DUMPS_MEMORY_SNAPSHOT_H_

#include <vector>

#include "allocator/core/allocator.h"
#include "allocator/core/memory_map.h"
#include "sim/layer.h"

namespace hbmsim::sim {

struct RegionSnapshot {
  RegionInfo region;
  std::vector<BlockInfo> blocks;  // address order
};

std::vector<RegionSnapshot> TakeMemorySnapshot(const Allocator& a);

// In use as TF counts it: held by a buffer, pending free included.
inline bool IsHeld(const BlockInfo& b) {
  return b.state == BlockState::kInUse || b.state == BlockState::kPendingFree;
}

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_DUMPS_MEMORY_SNAPSHOT_H_
