// What the report shows when a request fails under `bfc`: TF's OOM header
// line ("Allocator (bfc) ran out of memory trying to allocate ...") and its
// DumpMemoryLog (bfc_dump.h), as a job on TensorFlow or JAX prints them.
#ifndef HBMSIM_SIM_POLICIES_BFC_BFC_TEXTS_H_
#define HBMSIM_SIM_POLICIES_BFC_BFC_TEXTS_H_

#include <string>

#include "allocator/bfc/bfc_allocator.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// Called right after the failed request, while the allocator is in that state.
std::string BfcFailureText(const BfcAllocator& bfc, const FailureRecord& f);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_BFC_BFC_TEXTS_H_
