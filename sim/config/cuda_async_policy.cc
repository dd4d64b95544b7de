// The `cuda_async` policy's entry in the registry (model:
// allocator/cuda_async/cuda_async_allocator.h, docs/cuda-async-model.md).
// Defaults are what TF_GPU_ALLOCATOR=cuda_malloc_async runs with.
#include <string>
#include <variant>

#include "allocator/cuda_async/cuda_async_allocator.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

std::string AtLeastOneByte(const OptionValue& v) {
  return std::get<Bytes>(v).is_zero() ? "must be at least 1 byte" : "";
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeCudaAsync(Bytes bytes_limit, const OptionValues& o) {
  CudaAsyncOptions options;
  options.memory_limit = bytes_limit;
  options.granule = o.GetBytes("granule").value();
  options.alignment = o.GetBytes("alignment").value();
  options.va_range = o.GetBytes("va_range").value();
  options.release_threshold = o.GetBytes("release_threshold").value();
  options.opportunistic = o.GetBool("opportunistic");
  options.internal_dependencies = o.GetBool("internal_dependencies");
  options.preallocate = o.GetBool("preallocate");
  if (options.granule % options.alignment != 0) {
    return absl::InvalidArgumentError(fmt::format("cuda_async: granule={} must be a multiple of alignment={}",
                                                  options.granule, options.alignment));
  }
  return std::make_unique<CudaAsyncAllocator>(options);
}

}  // namespace

void RegisterCudaAsyncPolicy(PolicyRegistry& registry) {
  PolicySpec spec;
  spec.name = "cuda_async";
  spec.summary =
      "CUDA's stream-ordered pool (cudaMallocAsync), as TF_GPU_ALLOCATOR=cuda_malloc_async uses it";
  spec.options = {
      {"granule",
       OptionType::kBytes,
       "2MiB",
       "physical memory is mapped in granules of this size (a multiple of alignment)",
       {},
       AtLeastOneByte},
      {"alignment",
       OptionType::kBytes,
       "256",
       "requests are rounded up to a multiple of this",
       {},
       AtLeastOneByte},
      {"va_range",
       OptionType::kBytes,
       "2GiB",
       "virtual address range the pool reserves at a time (larger requests get their own)",
       {},
       AtLeastOneByte},
      {"release_threshold",
       OptionType::kBytes,
       "18446744073709551615",
       "cudaMemPoolAttrReleaseThreshold: mapped bytes kept at a completed free (TF: the pool size, i.e. "
       "never release; CUDA's own default: 0)",
       {},
       {}},
      {"opportunistic",
       OptionType::kBool,
       "true",
       "cudaMemPoolReuseAllowOpportunistic: a completed queued free is reusable by every stream "
       "(TF_DETERMINISTIC_ALLOCATOR=1: false)",
       {},
       {}},
      {"internal_dependencies",
       OptionType::kBool,
       "true",
       "cudaMemPoolReuseAllowInternalDependencies: at the limit, reuse memory still queued for freeing on "
       "another stream (TF_DETERMINISTIC_ALLOCATOR=1: false)",
       {},
       {}},
      {"preallocate",
       OptionType::kBool,
       "false",
       "map the whole limit at start (TF_CUDA_MALLOC_ASYNC_SUPPORTED_PREALLOC=-1)",
       {},
       {}},
  };
  spec.factory = MakeCudaAsync;
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
