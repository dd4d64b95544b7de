// Rebuilding a BFC heap from a dump's chunk list, and the consistency checks of
// bfc-allocator.md §3.4 (reference notes) that prove the rebuild is exact:
//
//   contiguity   chunk[i].addr + chunk[i].size == chunk[i+1].addr   (per region)
//   region ends  the last chunk of a region prints next 18446744073709551615
//   pool         sum(region sizes) == pool line's pool bytes
//   in use       sum(size of in-use chunks) == Stats InUse, and prints as Sum Total
//                (HumanReadableNumBytes, digit for digit)
//   bins         per bin b: #chunks with BinNumForSize(size) == b equals the
//                bin line's Total Chunks (in-use ones its Chunks in use), and
//                their sizes print as its "allocated for chunks" text
//   summary      the in-use summary equals the histogram of in-use chunk sizes
//   chunk state  the "Bin for" list names every free chunk of the request's bin
//
// A check whose inputs the dump lacks is not run (and not reported).
#ifndef HBMSIM_TRACE_BFC_DUMP_HEAP_H_
#define HBMSIM_TRACE_BFC_DUMP_HEAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

inline constexpr int kNumBins = 21;

// BFC's BinNumForSize: min(20, floor(log2(max(bytes, 256) >> 8))).
int BinNumForSize(uint64_t bytes);
inline uint64_t BinSize(int bin) { return uint64_t{256} << bin; }

// Why the chunk list cannot be taken as the whole heap; empty when it can.
std::vector<std::string> ChunkListGaps(const BfcDump& dump);

// Totals over a complete chunk list.
struct Heap {
  size_t regions = 0;
  size_t chunks = 0;
  size_t in_use_chunks = 0;
  size_t free_chunks = 0;
  uint64_t pool_bytes = 0;  // sum of chunk sizes
  uint64_t in_use_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t largest_free = 0;
  uint64_t tail_free = 0;        // the free chunk ending the highest region, if any
  uint64_t free_pages_2mib = 0;  // whole 2 MiB pages (aligned by address) inside free chunks
};

Heap RebuildHeap(const BfcDump& dump);

struct Check {
  std::string name;
  bool passed = false;
  std::string detail;  // what was compared, or the first mismatch
};

std::vector<Check> CheckConsistency(const BfcDump& dump, const Heap& heap);

// Free chunks per BFC bin: only bins that hold some.
struct BinCount {
  uint64_t bin_size = 0;
  uint64_t count = 0;
  uint64_t bytes = 0;
};
std::vector<BinCount> FreeChunkHistogram(const BfcDump& dump);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_HEAP_H_
