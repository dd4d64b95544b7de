// The `cuda_async` policy's entry in the registry (model:
// allocator/cuda_async/cuda_async_allocator.h, docs/cuda-async-model.md).
// Defaults are what TF_GPU_ALLOCATOR=cuda_malloc_async runs with; each option
// is declared once, on the CudaAsyncOptions member it sets.
#include <string>
#include <variant>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/policies/core/shared_trials_for.h"

namespace hbmsim::sim {
namespace {

// cuda_async's options, each name written once, in the table below.
struct CudaAsyncOption {
  static constexpr OptionName<Bytes> kGranule{"granule"};
  static constexpr OptionName<Bytes> kAlignment{"alignment"};
  static constexpr OptionName<Bytes> kVaRange{"va_range"};
  static constexpr OptionName<Bytes> kReleaseThreshold{"release_threshold"};
  static constexpr OptionName<bool> kOpportunistic{"opportunistic"};
  static constexpr OptionName<bool> kInternalDependencies{"internal_dependencies"};
  static constexpr OptionName<bool> kPreallocate{"preallocate"};
};

absl::StatusOr<std::unique_ptr<Allocator>> MakeCudaAsync(const CudaAsyncOptions& options) {
  if (options.granule % options.alignment != 0) {
    return absl::InvalidArgumentError(fmt::format("cuda_async: granule={} must be a multiple of alignment={}",
                                                  options.granule, options.alignment));
  }
  return std::make_unique<CudaAsyncAllocator>(options);
}

}  // namespace

absl::Status RegisterCudaAsyncPolicy(PolicyRegistry& registry) {
  OptionTable<CudaAsyncOptions> t;
  t.Limit(&CudaAsyncOptions::memory_limit);
  t.Add(CudaAsyncOption::kGranule, &CudaAsyncOptions::granule,
        "physical memory is mapped in granules of this size (a multiple of alignment)", AtLeastOneByte);
  t.Add(CudaAsyncOption::kAlignment, &CudaAsyncOptions::alignment,
        "requests are rounded up to a multiple of this", AtLeastOneByte);
  t.Add(CudaAsyncOption::kVaRange, &CudaAsyncOptions::va_range,
        "virtual address range the pool reserves at a time (larger requests get their own)", AtLeastOneByte);
  t.Add(CudaAsyncOption::kReleaseThreshold, &CudaAsyncOptions::release_threshold,
        "cudaMemPoolAttrReleaseThreshold: mapped bytes kept at a completed free (TF: the pool size, i.e. "
        "never release; CUDA's own default: 0)");
  t.Add(CudaAsyncOption::kOpportunistic, &CudaAsyncOptions::opportunistic,
        "cudaMemPoolReuseAllowOpportunistic: a completed queued free is reusable by every stream "
        "(TF_DETERMINISTIC_ALLOCATOR=1: false)");
  t.Add(CudaAsyncOption::kInternalDependencies, &CudaAsyncOptions::internal_dependencies,
        "cudaMemPoolReuseAllowInternalDependencies: at the limit, reuse memory still queued for freeing on "
        "another stream (TF_DETERMINISTIC_ALLOCATOR=1: false)");
  t.Add(CudaAsyncOption::kPreallocate, &CudaAsyncOptions::preallocate,
        "map the whole limit at start (TF_CUDA_MALLOC_ASYNC_SUPPORTED_PREALLOC=-1)");
  PolicySpec spec = MakePolicySpec<CudaAsyncOptions>(
      "cuda_async", "CUDA's stream-ordered pool (cudaMallocAsync), as TF_GPU_ALLOCATOR=cuda_malloc_async uses it",
      std::move(t), MakeCudaAsync);
  spec.models_a_runtime = true;
  spec.shared_trials = SharedTrialsFor<CudaAsyncAllocator>();
  return registry.Register(std::move(spec));
}

}  // namespace hbmsim::sim
