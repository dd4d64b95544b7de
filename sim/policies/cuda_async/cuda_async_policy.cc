// The `cuda_async` policy's entry in the registry (model:
// allocator/cuda_async/cuda_async_allocator.h, docs/cuda-async-model.md).
// Defaults are what TF_GPU_ALLOCATOR=cuda_malloc_async runs with; each option
// is declared once, on the CudaAsyncOptions member it sets.
#include <string>
#include <variant>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/policies/core/shared_trials_for.h"

namespace hbmsim {
namespace {

absl::StatusOr<std::unique_ptr<Allocator>> MakeCudaAsync(const CudaAsyncOptions& options) {
  if (options.granule % options.alignment != 0) {
    return absl::InvalidArgumentError(fmt::format("cuda_async: granule={} must be a multiple of alignment={}",
                                                  options.granule, options.alignment));
  }
  return std::make_unique<CudaAsyncAllocator>(options);
}

}  // namespace

void RegisterCudaAsyncPolicy(PolicyRegistry& registry) {
  OptionTable<CudaAsyncOptions> t;
  t.Limit(&CudaAsyncOptions::memory_limit);
  t.Add("granule", &CudaAsyncOptions::granule,
        "physical memory is mapped in granules of this size (a multiple of alignment)", AtLeastOneByte);
  t.Add("alignment", &CudaAsyncOptions::alignment, "requests are rounded up to a multiple of this",
        AtLeastOneByte);
  t.Add("va_range", &CudaAsyncOptions::va_range,
        "virtual address range the pool reserves at a time (larger requests get their own)", AtLeastOneByte);
  t.Add("release_threshold", &CudaAsyncOptions::release_threshold,
        "cudaMemPoolAttrReleaseThreshold: mapped bytes kept at a completed free (TF: the pool size, i.e. "
        "never release; CUDA's own default: 0)");
  t.Add("opportunistic", &CudaAsyncOptions::opportunistic,
        "cudaMemPoolReuseAllowOpportunistic: a completed queued free is reusable by every stream "
        "(TF_DETERMINISTIC_ALLOCATOR=1: false)");
  t.Add("internal_dependencies", &CudaAsyncOptions::internal_dependencies,
        "cudaMemPoolReuseAllowInternalDependencies: at the limit, reuse memory still queued for freeing on "
        "another stream (TF_DETERMINISTIC_ALLOCATOR=1: false)");
  t.Add("preallocate", &CudaAsyncOptions::preallocate,
        "map the whole limit at start (TF_CUDA_MALLOC_ASYNC_SUPPORTED_PREALLOC=-1)");
  PolicySpec spec = MakePolicySpec<CudaAsyncOptions>(
      "cuda_async", "CUDA's stream-ordered pool (cudaMallocAsync), as TF_GPU_ALLOCATOR=cuda_malloc_async uses it",
      std::move(t), MakeCudaAsync);
  spec.models_a_runtime = true;
  spec.shared_trials = SharedTrialsFor<CudaAsyncAllocator>();
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
