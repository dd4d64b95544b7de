// libFuzzer target: `--set KEY=VALUE` (sim/config). The first byte picks the
// built-in policy, the rest is one or more KEY=VALUE arguments separated by
// newlines, applied in order as repeated --set flags are; every error must
// name the argument it refuses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr uint64_t kSetOptionBytesLimit = uint64_t{1} << 30;

}  // namespace

HBMSIM_FUZZ_ENTRY(set_option, SetOptionFuzzCorpus) {
  using namespace hbmsim;
  if (size == 0) return 0;
  const std::vector<PolicySpec>& policies = BuiltinPolicies().policies();
  AllocatorConfig config = DefaultConfig(policies[data[0] % policies.size()]);
  const std::string text = fuzz::AsString(data + 1, size - 1);
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view argument = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    absl::Status status = ApplySetOption(config, argument);
    if (!status.ok()) fuzz::CheckErrorMessage(status, "--set");
  }
  // A planning policy (offline) is built from a scenario's events, not from options alone.
  if (config.policy->plan) return 0;
  absl::StatusOr<std::unique_ptr<Allocator>> allocator = BuildAllocator(config, Bytes(kSetOptionBytesLimit));
  if (!allocator.ok()) return 0;
  // A fresh allocator breaking its own invariants is a bug whatever the options.
  if (absl::Status s = (*allocator)->CheckInvariants(); !s.ok()) {
    fuzz::Fail("fresh allocator: " + std::string(s.message()));
  }
  return 0;
}
