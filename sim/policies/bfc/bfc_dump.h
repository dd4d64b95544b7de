// TF's BFCAllocator::DumpMemoryLog, rebuilt from the outside: the memory map
// (WalkMemoryMap), the stats, and BFC's public bin helpers. The layout follows
// REF (bfc-allocator.md §3.3 of the reference notes) line for line, without the log
// prefixes, so users can put a simulated dump next to the one their job printed:
//
//   BFCAllocator dump for bfc
//   Bin (256): \tTotal Chunks: 2, Chunks in use: 1. 512B allocated for chunks. ...
//   ... (21 bin lines)
//   Bin for 1.0KiB was 1.0KiB, Chunk State:
//     Size: 1.2KiB | Requested Size: 256B | in_use: 0 | bin_num: 2, prev: ..., next: ...
//   Next region of size 4096
//   InUse at 0 of size 256 next 1
//   Free  at 100 of size 1280 next 2
//        Summary of in-use Chunks by size:
//   1 Chunks of size 256 totalling 256B
//   Sum Total of in-use chunks: 256B
//   Total bytes in pool: 4096 memory_limit_: 4096 available bytes: 0 curr_region_allocation_bytes_: 8192
//   Stats:
//   Limit:                            4096
//   ... (8 lines, LargestFreeBlock is the true largest free block)
//
// Formatting lives here, never in the policy.
#ifndef HBMSIM_SIM_POLICIES_BFC_BFC_DUMP_H_
#define HBMSIM_SIM_POLICIES_BFC_BFC_DUMP_H_

#include <string>
#include <string_view>

#include "allocator/bfc/bfc_allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// The dump TF prints when a request of `rounded` bytes fails. Every line ends
// with '\n'.
std::string BfcDumpMemoryLog(const BfcAllocator& bfc, std::string_view name, Bytes rounded);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_BFC_BFC_DUMP_H_
