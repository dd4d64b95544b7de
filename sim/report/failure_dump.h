// What the report shows at the first failure: the text the real runtime would
// have printed, then the memory it failed in. Each policy's messages are its
// own pure formatters (allocator/<policy>/*_messages.h); the choice of which to
// call lives here, so policies never format reports.
//
//   bfc    TF's OOM header line and DumpMemoryLog (bfc_dump.h)
//   torch  PyTorch's OutOfMemoryError text and torch.cuda.memory_summary()
//   tpu    the runtime's E0100/E0101 text, the allocation dump if the policy
//          kept one (log_allocations_on_oom), and the memory map
//   other  the generic memory map (memory_map_text.h)
#ifndef HBMSIM_SIM_REPORT_FAILURE_DUMP_H_
#define HBMSIM_SIM_REPORT_FAILURE_DUMP_H_

#include <string>

#include "allocator/core/allocator.h"
#include "sim/engine/replay_observer.h"

namespace hbmsim {

// Called right after the failed request, while the allocator is in that state.
std::string MemoryDumpAtFailure(const Allocator& a, const FailureRecord& f);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_REPORT_FAILURE_DUMP_H_
