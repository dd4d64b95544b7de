// The address space at one moment, aggregated for drawing: regions are laid
// end to end (gaps between them are not device memory the allocator holds) on
// a strip of kUnits pixel units. A block at least one unit wide is drawn as
// itself, split into its requested part and its rounding waste (size −
// requested); runs of narrower blocks are merged into one cell coloured by the
// state holding most of their bytes. So a map never has more than kUnits cells
// however many blocks the allocator has.
#ifndef HBMSIM_SIM_VIZ_ADDRESS_MAP_H_
#define HBMSIM_SIM_VIZ_ADDRESS_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/core/allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim::viz {

struct MapCell {
  uint64_t begin = 0;  // in units, [begin, end)
  uint64_t end = 0;
  BlockState state = BlockState::kFree;
  uint64_t bytes = 0;
  uint64_t waste = 0;   // size − requested of held blocks in the cell
  uint32_t blocks = 0;  // > 1: an aggregate
  uint64_t offset = 0;  // address of the first block
};

struct AddressMap {
  static constexpr uint64_t kUnits = 1100 * 12;  // 12 rows of 1100 px
  bool taken = false;
  uint64_t event = 0;
  std::string title;
  uint64_t regions = 0;
  uint64_t blocks = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t waste_bytes = 0;
  uint64_t largest_free = 0;
  std::vector<uint64_t> region_starts;  // in units, where each region begins
  std::vector<MapCell> cells;
};

// Walks `a` and aggregates it; cost O(blocks), memory O(kUnits).
AddressMap TakeAddressMap(const Allocator& a, uint64_t event, std::string title);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_ADDRESS_MAP_H_
