// What a PyTorch caching allocator holds at one moment, in PyTorch's terms
// (memory_stats() / memory_snapshot()), computed from the `torch` policy's
// state: the snapshot's own segments seeded into it, or the state a replay
// reached (sim/inspect/inspect_source.h).
//
//   reserved        = Σ segment bytes (expandable: mapped bytes only)
//   allocated       = Σ blocks handed to tensors
//   active          = allocated + blocks freed but awaiting their stream (pending)
//   inactive_split  = Σ free blocks of split non-expandable segments: cached
//                     memory empty_cache() cannot return
//   releasable      = Σ free non-expandable segments that are one whole block
//                     + whole free pages of expandable segments: what
//                     empty_cache() would give back
//   fragmentation   = 1 − largest free block / free bytes (0: all free bytes
//                     are one block; near 1: many small pieces)
#ifndef HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_ANALYSIS_H_
#define HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_ANALYSIS_H_

#include <cstdint>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim::torch {

// sim's half of the torch policy sees its allocator half, allocator/torch, as its
// own (a sim file's `torch::TorchAllocator` finds it through here).
using namespace ::hbmsim::allocator::torch;

// Totals of one (pool, stream), or of everything.
struct PoolTotals {
  bool small = false;
  uint64_t stream = 0;
  uint64_t segments = 0;  // non-expandable segments and expandable mapped runs
  Bytes reserved;
  Bytes allocated;
  Bytes active;
  Bytes requested;  // Σ requested bytes of active blocks
  Bytes inactive_split;
  Bytes free;  // every free mapped block
  Bytes largest_free;
  uint64_t free_blocks = 0;
};

struct SegmentRow {
  Offset base;
  Bytes reserved;  // mapped bytes of an expandable range
  uint64_t stream = 0;
  bool small = false;
  bool expandable = false;
  uint64_t blocks = 0;  // mapped blocks
  Bytes allocated;
  Bytes free;
  Bytes largest_free;
};

struct LiveBlock {
  Offset addr;
  Bytes size;
  Bytes requested;
  uint64_t stream = 0;
  bool pending_free = false;
  Offset segment;
};

struct StateAnalysis {
  std::vector<PoolTotals> pools;  // (small before large, stream ascending); only those holding memory
  PoolTotals total;
  std::vector<SegmentRow> segments;  // by base address
  std::vector<LiveBlock> biggest;    // the largest live blocks, largest first (address on ties)
  Bytes releasable;
  double fragmentation = 0;  // see above; 0 when nothing is free
};

StateAnalysis Analyze(const torch::TorchAllocator& a, size_t biggest = 10);

}  // namespace hbmsim::sim::torch

#endif  // HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_ANALYSIS_H_
