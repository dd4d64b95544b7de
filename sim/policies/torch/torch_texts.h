// How reports show the `torch` policy in PyTorch's own words:
//
//   TorchFailureText  the OutOfMemoryError text of the last failure, then
//                     torch.cuda.memory_summary() and the memory map
//   TorchStatsText    the torch.cuda.memory_stats() keys people read first,
//                     each with PyTorch's meaning (reserved_bytes.all.current
//                     is what nvidia-smi shows the caching allocator holding),
//                     then the device capacity
#ifndef HBMSIM_SIM_POLICIES_TORCH_TORCH_TEXTS_H_
#define HBMSIM_SIM_POLICIES_TORCH_TORCH_TEXTS_H_

#include <string>

#include "allocator/torch/torch_allocator.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// Called right after the failed request, while the allocator is in that state.
std::string TorchFailureText(const torch::TorchAllocator& t, const FailureRecord& f);
std::string TorchStatsText(const torch::TorchAllocator& t);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_TORCH_TORCH_TEXTS_H_
