// The `tpu` policy's entry in the registry. Option names follow TpuOptions
// (allocator/tpu/tpu_options.h); `bytes_limit` is the HBM of one device.
#include <variant>

#include "allocator/tpu/tpu_allocator.h"
#include "allocator/tpu/tpu_options.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

std::string AtLeastOneByte(const OptionValue& v) {
  return std::get<Bytes>(v).is_zero() ? "must be at least 1 byte" : "";
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeTpu(Bytes bytes_limit, const OptionValues& o) {
  TpuOptions options;
  options.hbm_bytes = bytes_limit;
  options.granule = o.GetBytes("granule");
  options.tile_padding = o.GetBool("tile_padding");
  options.queued_free_retry = o.GetBool("queued_free_retry");
  options.defragment = o.GetBool("defragment");
  options.evict_programs = o.GetBool("evict_programs");
  options.eviction_order = ParseEvictionOrder(o.GetString("eviction_order")).value_or(EvictionOrder::kLru);
  options.log_allocations_on_oom = o.GetBool("log_allocations_on_oom");
  if (absl::Status s = ValidateTpuOptions(options); !s.ok()) return s;
  return std::make_unique<TpuAllocator>(options);
}

OptionSpec Bool(std::string name, std::string default_text, std::string help) {
  return {std::move(name), OptionType::kBool, std::move(default_text), std::move(help), {}, {}};
}

}  // namespace

void RegisterTpuPolicy(PolicyRegistry& registry) {
  PolicySpec spec;
  spec.name = "tpu";
  spec.summary = "TPU HBM model: padded buffers from the top, programs from the bottom, recovery ladder";
  spec.options = {
      {"granule",
       OptionType::kBytes,
       "512",
       "allocation quantum (not public; assumption)",
       {},
       AtLeastOneByte},
      Bool("tile_padding", "true", "pad shaped buffers to the TPU tile layout (E1000)"),
      Bool("queued_free_retry", "true", "rung 1: complete queued deallocations and retry (E0100)"),
      Bool("defragment", "true", "rung 2: compact live buffers and retry (E0100)"),
      Bool("evict_programs", "true", "rung 3: evict resident programs and retry (E0100/E0101)"),
      {"eviction_order",
       OptionType::kEnum,
       "lru",
       "which resident program is evicted first (assumption)",
       {"lru", "largest_first"},
       {}},
      Bool("log_allocations_on_oom", "false", "keep a snapshot of live buffers and programs at each failure"),
  };
  spec.factory = MakeTpu;
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
