// A policy-neutral memory map for policies that have no dump format of their
// own (a row that names no failure text of its own): each region, then each block in address order.
//
//   Memory map of POLICY: 1 region
//   Region 0 at 0 of size 4096
//     InUse   at 0 of size 1024 requested 1000 id 1
//     Free    at 400 of size 3072
#ifndef HBMSIM_SIM_DUMPS_MEMORY_MAP_TEXT_H_
#define HBMSIM_SIM_DUMPS_MEMORY_MAP_TEXT_H_

#include <string>

#include "allocator/core/allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim {

std::string MemoryMapText(const Allocator& a);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_DUMPS_MEMORY_MAP_TEXT_H_
