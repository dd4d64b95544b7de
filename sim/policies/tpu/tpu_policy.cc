// The `tpu` policy's entry in the registry, each option bound to its
// TpuOptions member (allocator/tpu/tpu_options.h); `bytes_limit` is the HBM of
// one device.
#include <string>
#include <variant>

#include "allocator/tpu/tpu_allocator.h"
#include "allocator/tpu/tpu_options.h"
#include "sim/config/policy_registry.h"
#include "sim/dumps/failure_texts.h"
#include "sim/layer.h"
#include "sim/policies/core/for_policy.h"
#include "sim/policies/tpu/tpu_texts.h"

namespace hbmsim::sim {
namespace {

// tpu's options, each name written once: the table below declares them, the
// advice refers to them.
struct TpuOption {
  static constexpr OptionName<Bytes> kGranule{"granule"};
  static constexpr OptionName<bool> kTilePadding{"tile_padding"};
  static constexpr OptionName<bool> kQueuedFreeRetry{"queued_free_retry"};
  static constexpr OptionName<bool> kDefragment{"defragment"};
  static constexpr OptionName<bool> kEvictPrograms{"evict_programs"};
  static constexpr OptionName<std::string> kEvictionOrder{"eviction_order"};
  static constexpr OptionName<bool> kLogAllocationsOnOom{"log_allocations_on_oom"};
};

absl::StatusOr<std::unique_ptr<Allocator>> MakeTpu(const TpuOptions& options) {
  if (absl::Status s = ValidateTpuOptions(options); !s.ok()) return s;
  return std::make_unique<TpuAllocator>(options);
}

}  // namespace

absl::Status RegisterTpuPolicy(PolicyRegistry& registry) {
  OptionTable<TpuOptions> t;
  t.Limit(&TpuOptions::hbm_bytes);
  t.Add(TpuOption::kGranule, &TpuOptions::granule, "allocation quantum (not public; assumption)",
        AtLeastOneByte);
  t.Add(TpuOption::kTilePadding, &TpuOptions::tile_padding,
        "pad shaped buffers to the TPU tile layout (E1000)");
  t.Add(TpuOption::kQueuedFreeRetry, &TpuOptions::queued_free_retry,
        "rung 1: complete queued deallocations and retry (E0100)");
  t.Add(TpuOption::kDefragment, &TpuOptions::defragment, "rung 2: compact live buffers and retry (E0100)");
  t.Add(TpuOption::kEvictPrograms, &TpuOptions::evict_programs,
        "rung 3: evict resident programs and retry (E0100/E0101)");
  t.AddEnum(TpuOption::kEvictionOrder, &TpuOptions::eviction_order,
            "which resident program is evicted first (assumption)",
            {EvictionOrder::kLru, EvictionOrder::kLargestFirst}, EvictionOrderName);
  t.Add(TpuOption::kLogAllocationsOnOom, &TpuOptions::log_allocations_on_oom,
        "keep a snapshot of live buffers and programs at each failure");
  PolicySpec spec = MakePolicySpec<TpuOptions>(
      "tpu", "TPU HBM model: padded buffers from the top, programs from the bottom, recovery ladder",
      std::move(t), MakeTpu);
  spec.texts.at_failure = ForPolicy(TpuFailureText, GenericFailureText);
  spec.models_a_runtime = true;
  // The runtime's own recovery rungs have no public switch: these rows show
  // what they are worth when a YAML turned them off, and the undocumented
  // eviction order (an assumption, docs/tpu-model.md) the other way round.
  spec.advice = {
      {"",
       {{TpuOption::kDefragment, true}},
       "the runtime's defragment-and-retry on (hbmsim --set defragment=true)"},
      {"",
       {{TpuOption::kEvictPrograms, true}},
       "the runtime's program eviction on (hbmsim --set evict_programs=true)"},
      {"",
       {{TpuOption::kEvictionOrder, "largest_first"}},
       "evict the largest program first (hbmsim --set eviction_order=largest_first)"},
  };
  return registry.Register(std::move(spec));
}

}  // namespace hbmsim::sim
