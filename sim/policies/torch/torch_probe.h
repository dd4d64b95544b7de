// --probe SIZE: what the `torch` policy, seeded with the inspected state,
// does with one more request of SIZE bytes. The state itself is not touched:
// the request runs on a copy.
//
//   served    from a cached free block (taken whole, or split: the remainder
//             stays cached), after growing an expandable segment (segment_map),
//             or from a new cudaMalloc segment; the cache flush of the failure
//             ladder (release_cached_blocks) is named when it ran first
//   failed    PyTorch's OutOfMemoryError text for that state, and hbmsim's
//             verdict: oom (the rounded request exceeds all free memory) or
//             fragmentation (enough is free, but not in one piece)
#ifndef HBMSIM_SIM_POLICIES_TORCH_TORCH_PROBE_H_
#define HBMSIM_SIM_POLICIES_TORCH_TORCH_PROBE_H_

#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "sim/layer.h"

namespace hbmsim::sim::torch {

// sim's half of the torch policy sees its allocator half, allocator/torch, as its
// own (a sim file's `torch::TorchAllocator` finds it through here).
using namespace ::hbmsim::allocator::torch;

struct ProbeAnswer {
  Bytes requested;
  Bytes rounded;
  StreamId stream;
  bool small_pool = false;
  AllocResult result;
  // How it was served, e.g. "split the free block at 0x7f..: 512 B taken,
  // 1048064 B stay cached"; empty on failure.
  std::string how;
  std::vector<std::string> steps;  // what the policy did first: "release_cached_blocks returned 4 MiB", ...
  std::string oom_message;         // PyTorch's text, on failure
};

ProbeAnswer Probe(const torch::TorchAllocator& state, Bytes size, StreamId stream);

}  // namespace hbmsim::sim::torch

#endif  // HBMSIM_SIM_POLICIES_TORCH_TORCH_PROBE_H_
