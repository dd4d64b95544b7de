// libFuzzer target: the strict YAML allocator-config loader (sim/config) over
// every built-in policy, then the policy built from what it accepted: a
// config that loads must build or be refused with a message, never crash.
#include <cstddef>
#include <cstdint>

#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// The policies are built under this limit: enough for any option's minimum,
// small enough that a policy sizing tables by the limit stays cheap.
constexpr uint64_t kFuzzBytesLimit = uint64_t{1} << 30;

}  // namespace

HBMSIM_FUZZ_ENTRY(yaml_config, YamlConfigFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz.yaml";
  const std::string text = fuzz::AsString(data, size);
  absl::StatusOr<AllocatorConfig> config = ParseAllocatorConfig(BuiltinPolicies(), text, name);
  if (!config.ok()) {
    fuzz::CheckErrorMessage(config.status(), name);
    return 0;
  }
  // A planning policy (offline) is built from a scenario's events, not from options alone.
  if (config->policy->plan) return 0;
  absl::StatusOr<std::unique_ptr<Allocator>> allocator = BuildAllocator(*config, Bytes(kFuzzBytesLimit));
  if (!allocator.ok()) return 0;
  // A fresh allocator breaking its own invariants is a bug whatever the options.
  if (absl::Status s = (*allocator)->CheckInvariants(); !s.ok()) {
    fuzz::Fail("fresh allocator: " + std::string(s.message()));
  }
  return 0;
}
