// The `torch` row's state analysis for `hbmsim inspect` (PolicySpec::
// state_analysis): PyTorch's pools, free memory and segments in
// memory_stats() terms (torch_state_analysis.h), the largest live blocks, and
// --probe through a copy of the policy (torch_probe.h).
#ifndef HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_VIEW_H_
#define HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_VIEW_H_

#include "sim/config/state_view.h"

namespace hbmsim::sim {

StateAnalysisSupport TorchStateAnalysis();

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_TORCH_TORCH_STATE_VIEW_H_
