// What the report shows at the first failure: the text the real runtime would
// have printed, then the memory it failed in. Each policy's row in the registry
// (sim/config/*_policy.cc) names its formatter, so no report asks which policy
// it is looking at; policies themselves never format reports.
//
//   bfc    TF's OOM header line and DumpMemoryLog (bfc_dump.h)
//   torch  PyTorch's OutOfMemoryError text and torch.cuda.memory_summary()
//   tpu    the runtime's E0100/E0101 text, the allocation dump if the policy
//          kept one (log_allocations_on_oom), and the memory map
//   other  the generic memory map (memory_map_text.h)
#ifndef HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_
#define HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_

#include <string>

#include "allocator/bfc/bfc_allocator.h"
#include "allocator/core/allocator.h"
#include "allocator/torch/torch_allocator.h"
#include "allocator/tpu/tpu_allocator.h"
#include "sim/engine/replay_observer.h"

namespace hbmsim {

// Each is called right after the failed request, while the allocator is in that state.
std::string BfcFailureText(const BfcAllocator& bfc, const FailureRecord& f);
std::string TorchFailureText(const torch::TorchAllocator& t, const FailureRecord& f);
std::string TpuFailureText(const TpuAllocator& tpu, const FailureRecord& f);
std::string GenericFailureText(const Allocator& a, const FailureRecord& f);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_
