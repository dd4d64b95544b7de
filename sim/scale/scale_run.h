// One replay of a recording or a prediction for `scale`: ScenarioRun (the
// replay `hbmsim replay` runs, start state, settings and all) with the
// observers the answer needs: the first failure and its top user frame, and
// where the memory is at the peak, by frame.
#ifndef HBMSIM_SIM_SCALE_SCALE_RUN_H_
#define HBMSIM_SIM_SCALE_SCALE_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "sim/config/allocator_config.h"
#include "sim/layer.h"
#include "sim/report/memory_attribution.h"
#include "sim/scenario/scenario.h"
#include "sim/viz/viz_outputs.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::scale {

// The call's innermost user frame, else (a backward pass runs on autograd's
// own thread, with C++ frames only) its innermost ATen kernel or op and the
// autograd node running it, named without return type, template and
// parameters: "at::_ops::mul_Tensor in DivBackward0"; "" when none is recorded.
std::string CallFrame(const ContextTable* table, uint32_t frames);

struct ScaleFailure {
  AllocStatus kind = AllocStatus::kOom;
  uint64_t event = 0;
  Bytes requested;
  std::string frame;  // the request's CallFrame
};

struct ScaleRunResult {
  Bytes limit;
  uint64_t allocations = 0;  // allocs replayed, the start state's excluded
  Bytes peak_allocated;      // the policy's peak bytes in use (torch: allocated_bytes.all.peak)
  Bytes peak_reserved;       // its peak pool bytes (torch: reserved_bytes.all.peak)
  uint64_t failures = 0;
  uint64_t oom = 0;
  uint64_t fragmentation = 0;
  std::optional<ScaleFailure> first_failure;
  std::optional<MemoryBreakdown> at_peak;  // with `attribute`

  bool fits() const { return failures == 0; }
  // "fits", "oom" or "fragmentation" (the first failure's).
  std::string_view Verdict() const;
};

struct ScaleRunOptions {
  bool stop_at_first_failure = false;  // enough to know fits or not
  bool attribute = false;              // keep where the memory is at the peak
  // --out: the run written as a PyTorch snapshot (the viz outputs' memory
  // viz export) into `outputs`, which the caller opened and commits.
  viz::VizOutputs* viz = nullptr;
  const io::OutputSet* outputs = nullptr;
};

// Errors: the policy's, the recording's, a broken invariant (InternalError).
absl::StatusOr<ScaleRunResult> RunForScale(const Scenario& scenario, const AllocatorConfig& config,
                                           Bytes limit, const ScaleRunOptions& options);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SCALE_RUN_H_
