// The `bfc` policy's entry in the registry: option names and defaults exactly
// as the CLI contract (docs/cli.md) fixes them, each bound to its BfcOptions member.
#include <variant>

#include "allocator/bfc/bfc_allocator.h"
#include "sim/config/policy_registry.h"
#include "sim/dumps/failure_texts.h"
#include "sim/layer.h"
#include "sim/policies/bfc/bfc_texts.h"
#include "sim/policies/core/for_policy.h"
#include "sim/policies/core/shared_trials_for.h"

namespace hbmsim::sim {
namespace {

// bfc's options, each name written once: the table below declares them, the
// advice, decides_as and the recorded settings refer to them.
struct BfcOption {
  static constexpr OptionName<bool> kAllowGrowth{"allow_growth"};
  static constexpr OptionName<bool> kGarbageCollection{"garbage_collection"};
  static constexpr OptionName<double> kFragmentationFraction{"fragmentation_fraction"};
  static constexpr OptionName<bool> kRegionCoalescing{"region_coalescing"};
  static constexpr OptionName<Bytes> kFirstRegion{"first_region"};
};

std::string FirstRegionPositive(const OptionValue& v) {
  return std::get<Bytes>(v).value() > 0 ? "" : "must be at least 1 byte";
}

std::string FractionInRange(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f < 1 ? "" : "must be >= 0 and < 1";
}

// What a TF/JAX profile tells about its BFC allocator, as options:
//   TF, device memory     garbage_collection on; region_coalescing off: TF's
//                         GPU allocator takes its regions from DeviceMemAllocator
//                         (cudaMalloc), its virtual-memory sub-allocator being
//                         compiled out (`#if 0` in gpu_process_state.cc's
//                         CreateSubAllocator, "Observed OOM issues")
//   JAX/XLA, or a pinned-host allocator   both off (DeviceMemAllocator, host BFC)
//   allow_growth          as the fragmentation readings tell (pool grown on
//                         demand); when they cannot, on for a host allocator
//   first_region          1 MiB when the readings' pool is an odd number of MiB
// A recording that says none of this (a PyTorch snapshot, an XLA dump) sets nothing.
std::vector<OptionEdit> RecordedOptions(const RecordedSettings& s, DeviceId) {
  // An XLA dump says how XLA packed the program, nothing of a BFC allocator.
  if ((s.framework == Framework::kUnknown || s.framework == Framework::kXla) && !s.host_memory) return {};
  const bool host = s.host_memory.value_or(false);
  const bool tf_device = s.framework == Framework::kTensorFlow && !host;
  std::vector<OptionEdit> edits = {{BfcOption::kAllowGrowth, s.pool_grown.value_or(host)},
                                   {BfcOption::kGarbageCollection, tf_device},
                                   {BfcOption::kRegionCoalescing, false}};
  if (s.first_region) edits.push_back({BfcOption::kFirstRegion, Bytes(*s.first_region)});
  return edits;
}

}  // namespace

absl::Status RegisterBfcPolicy(PolicyRegistry& registry) {
  OptionTable<BfcOptions> t;
  t.Limit(&BfcOptions::memory_limit);
  t.Add(BfcOption::kAllowGrowth, &BfcOptions::allow_growth,
        "false: the first region takes the whole limit; true: regions start at first_region and double");
  t.Add(BfcOption::kGarbageCollection, &BfcOptions::garbage_collection,
        "on failure, release fully free regions and retry (TensorFlow: on; JAX: off)");
  t.Add(BfcOption::kFragmentationFraction, &BfcOptions::fragmentation_fraction,
        "if > 0, the max internal fragmentation is this fraction of the limit instead of 128 MiB",
        FractionInRange);
  t.Add(BfcOption::kRegionCoalescing, &BfcOptions::region_coalescing,
        "the device can extend a region in place (TSL's virtual-memory sub-allocator, which TensorFlow's GPU "
        "device compiles out)");
  t.Add(BfcOption::kFirstRegion, &BfcOptions::first_region,
        "with allow_growth, the first region's size: 2 MiB (TSL); 1 MiB in TF 1.x-2.1 and the TF builds whose "
        "profiles show a pool of an odd number of MiB",
        FirstRegionPositive);
  PolicySpec spec = MakePolicySpec<BfcOptions>(
      "bfc", "TensorFlow/XLA best-fit-with-coalescing allocator (TSL BFCAllocator)", std::move(t),
      [](const BfcOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<BfcAllocator>(o);
      });
  spec.texts.at_failure = ForPolicy(BfcFailureText, GenericFailureText);
  // Garbage collection without growth never collects (BfcAllocator::GarbageCollect):
  // the one region is free only as a chunk no failed request fits in.
  spec.decides_as = {{{BfcOption::kAllowGrowth, false}, {BfcOption::kGarbageCollection, false}}};
  // A TF/JAX profile records its BFC allocators (their options: RecordedOptions).
  spec.recording.made_formats = {TraceFormat::kXplane, TraceFormat::kMemoryProfile};
  spec.recording.recorded_options = RecordedOptions;
  spec.advice = {
      {"",
       {{BfcOption::kAllowGrowth, true}},
       "TF_FORCE_GPU_ALLOW_GROWTH=true (JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false)"},
      {"",
       {{BfcOption::kAllowGrowth, false}},
       "TF_FORCE_GPU_ALLOW_GROWTH=false (JAX: XLA_PYTHON_CLIENT_PREALLOCATE=true)"},
      {"", {{BfcOption::kGarbageCollection, true}}, "TF_ENABLE_GPU_GARBAGE_COLLECTION=true"},
      {"cuda_async", {}, "TF_GPU_ALLOCATOR=cuda_malloc_async"},
  };
  spec.models_a_runtime = true;
  spec.shared_trials = SharedTrialsFor<BfcAllocator>();
  spec.limit_setting =
      "XLA_PYTHON_CLIENT_MEM_FRACTION={0} (JAX); TF: GPUOptions.per_process_gpu_memory_fraction={0}";
  return registry.Register(std::move(spec));
}

}  // namespace hbmsim::sim
