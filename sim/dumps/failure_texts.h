// What the report shows at the first failure when a policy's row names no
// text of its own: the generic memory map (memory_map_text.h). The texts in
// a runtime's own words (TF's DumpMemoryLog, PyTorch's OutOfMemoryError, the
// TPU runtime's E0100) live with their policy, in sim/policies/<p>/; policies
// themselves never format reports.
#ifndef HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_
#define HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_

#include <string>

#include "allocator/core/allocator.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// Called right after the failed request, while the allocator is in that state.
std::string GenericFailureText(const Allocator& a, const FailureRecord& f);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_DUMPS_FAILURE_TEXTS_H_
