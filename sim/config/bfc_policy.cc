// The `bfc` policy's entry in the registry: option names and defaults exactly
// as shared/spec/cli-contract.md fixes them.
#include <variant>

#include "allocator/bfc/bfc_allocator.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

std::string FractionInRange(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f < 1 ? "" : "must be >= 0 and < 1";
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeBfc(Bytes bytes_limit, const OptionValues& o) {
  BfcOptions options;
  options.memory_limit = bytes_limit;
  options.allow_growth = o.GetBool("allow_growth");
  options.garbage_collection = o.GetBool("garbage_collection");
  options.region_coalescing = o.GetBool("region_coalescing");
  options.fragmentation_fraction = o.GetDouble("fragmentation_fraction");
  return std::make_unique<BfcAllocator>(options);
}

}  // namespace

void RegisterBfcPolicy(PolicyRegistry& registry) {
  PolicySpec spec;
  spec.name = "bfc";
  spec.summary = "TensorFlow/XLA best-fit-with-coalescing allocator (TSL BFCAllocator)";
  spec.options = {
      {"allow_growth",
       OptionType::kBool,
       "false",
       "false: the first region takes the whole limit; true: regions start at 2 MiB and double",
       {},
       {}},
      {"garbage_collection",
       OptionType::kBool,
       "false",
       "on failure, release fully free regions and retry (TensorFlow: on; JAX: off)",
       {},
       {}},
      {"fragmentation_fraction",
       OptionType::kDouble,
       "0",
       "if > 0, the max internal fragmentation is this fraction of the limit instead of 128 MiB",
       {},
       FractionInRange},
      {"region_coalescing",
       OptionType::kBool,
       "false",
       "the device can extend a region in place (TensorFlow's virtual-memory sub-allocator)",
       {},
       {}},
  };
  spec.factory = MakeBfc;
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
