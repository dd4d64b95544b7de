// What the report shows when a request fails under `tpu`: the runtime's
// E0100 (buffer) or E0101 (program load) text, the allocation dump when the
// policy kept one (log_allocations_on_oom), then the generic memory map.
#ifndef HBMSIM_SIM_POLICIES_TPU_TPU_TEXTS_H_
#define HBMSIM_SIM_POLICIES_TPU_TPU_TEXTS_H_

#include <string>

#include "allocator/tpu/tpu_allocator.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// Called right after the failed request, while the allocator is in that state.
std::string TpuFailureText(const TpuAllocator& tpu, const FailureRecord& f);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_TPU_TPU_TEXTS_H_
