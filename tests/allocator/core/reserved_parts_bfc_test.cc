// TensorFlow/XLA's BFC allocator, reserved explained by hand: each cause of
// BfcAllocator::CauseOf (allocator/bfc/bfc_inspect.cc). The rules used, from
// allocator/bfc/bfc_allocator.h's model (REF: tsl/framework/bfc_allocator.cc,
// sections of the project's bfc-allocator.md notes):
//   rounding   256·ceil(n/256)                                       §1.1
//   best fit   min (size, address) over free chunks that fit; the    §1.3
//              allocation takes the chunk's low end
//   split      iff size >= 2·rounded (or the rest >= 128 MiB)        §1.4
//   bins       bin = min(20, floor(log2(size / 256)))                 BinNumForSize
//   growth     without it one region of the whole limit; with it,   §1.7
//              regions of curr = 2 MiB, doubled after each Extend
// CauseOf: a region's last free chunk is its tail; any other free chunk
// waits in its bin.
#include <memory>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "sim/all_layers.h"
#include "tests/allocator/core/reserved_parts_cases.h"

namespace hbmsim::testing {
namespace {

std::unique_ptr<BfcAllocator> MakeBfc(uint64_t limit, bool allow_growth = false) {
  BfcOptions o;
  o.memory_limit = Bytes(limit);
  o.allow_growth = allow_growth;
  return std::make_unique<BfcAllocator>(o);
}

// One 1 MiB region. 256 B takes [0, 256), 500 B rounds to 512 (rounding 12)
// at [256, 768). With the first freed: a 256 B chunk in bin
// floor(log2(256/256)) = 0, below live memory, and the tail [768, 1 MiB).
// 500 + 12 + 256 + (1 MiB − 768) = 1 MiB.
std::unique_ptr<Allocator> BfcLowChunkFreed() {
  auto a = MakeBfc(kMiB);
  const AllocResult x = AllocBytes(*a, 1, 256);
  AllocBytes(*a, 2, 500);
  a->Free(x.handle);
  return a;
}

// A bin above 0: 3 MiB at [0, 3 MiB) then 1 KiB above it; 3 MiB freed is in
// bin floor(log2(3 MiB / 256)) = floor(log2(12288)) = 13, not the power of two
// above. The region's tail is 64 MiB − 3 MiB − 1 KiB.
std::unique_ptr<Allocator> BfcThreeMiBChunkFreed() {
  auto a = MakeBfc(64 * kMiB);
  const AllocResult x = AllocBytes(*a, 1, 3 * kMiB);
  AllocBytes(*a, 2, kKiB);
  a->Free(x.handle);
  return a;
}

// Growth: 1 MiB makes region 0 of curr = 2 MiB (curr doubles to 4 MiB) and
// splits it (2 MiB >= 2 · 1 MiB); 1.5 MiB fits no free chunk (region 0's
// tail is 1 MiB), so it makes region 1 of 4 MiB, split too (4 >= 3). Each
// region's free top is its own tail: 1 MiB and 2.5 MiB.
std::unique_ptr<Allocator> BfcTwoRegionsGrown() {
  auto a = MakeBfc(64 * kMiB, /*allow_growth=*/true);
  AllocBytes(*a, 1, kMiB);
  AllocBytes(*a, 2, 3 * kMiB / 2);
  return a;
}

// A chunk is split only when it is at least twice the request (§1.4): 3 MiB
// makes region 1 of 4 MiB as above, 4 < 2 · 3, so the request takes all of
// it and its rounding is the 1 MiB TF counts in use.
std::unique_ptr<Allocator> BfcUnsplitRegion() {
  auto a = MakeBfc(64 * kMiB, /*allow_growth=*/true);
  AllocBytes(*a, 1, kMiB);
  AllocBytes(*a, 2, 3 * kMiB);
  return a;
}

}  // namespace

std::vector<WorkedCase> BfcWorkedCases() {
  return {
      {"RoundingFreeChunkBin0AndRegionTail", "bfc", "free_chunk", "bin 0", BfcLowChunkFreed,
       fmt::format("requested=500; rounding=12/1; region_tail[region 0]={}/1; free_chunk[bin 0]=256/1",
                   kMiB - 768)},
      {"FreeChunkBin13", "bfc", "free_chunk", "bin 13", BfcThreeMiBChunkFreed,
       fmt::format("requested={}; rounding=0/1; region_tail[region 0]={}/1; free_chunk[bin 13]={}/1", kKiB,
                   61 * kMiB - kKiB, 3 * kMiB)},
      {"RegionTailOfEachRegion", "bfc", "region_tail", "region 1", BfcTwoRegionsGrown,
       fmt::format("requested={}; rounding=0/2; region_tail[region 1]={}/1; region_tail[region 0]={}/1",
                   5 * kMiB / 2, 5 * kMiB / 2, kMiB)},
      {"RoundingOfAnUnsplitChunk", "bfc", "rounding", "", BfcUnsplitRegion,
       fmt::format("requested={}; rounding={}/2; region_tail[region 0]={}/1", 4 * kMiB, kMiB, kMiB)},
  };
}

}  // namespace hbmsim::testing
