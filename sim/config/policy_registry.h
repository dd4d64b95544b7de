// The allocator policies hbmsim can build: for each a name, a one-line summary,
// its option specs and a factory. Registration is an explicit function
// (RegisterBuiltinPolicies) rather than static initializers, which the linker
// drops from static libraries.
//
// Adding a policy: write `void RegisterXxxPolicy(PolicyRegistry&)` in a new
// sim/config/xxx_policy.cc and call it from builtin_policies.cc.
#ifndef HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_
#define HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "sim/config/option.h"

namespace hbmsim {

using AllocatorFactory =
    std::function<absl::StatusOr<std::unique_ptr<Allocator>>(Bytes bytes_limit, const OptionValues& options)>;

struct PolicySpec {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;  // in the order reports list them
  AllocatorFactory factory;

  const OptionSpec* FindOption(std::string_view option) const;
  // "allow_growth, garbage_collection, ..." (spec order), for error messages.
  std::string KnownOptions() const;
};

class PolicyRegistry {
 public:
  // Fails on a duplicate name (a programming error, caught by tests).
  absl::Status Register(PolicySpec spec);
  const PolicySpec* Find(std::string_view name) const;
  // Names in alphabetical order: "bfc, torch, tpu".
  std::string Names() const;
  const std::vector<PolicySpec>& policies() const { return policies_; }

 private:
  std::vector<PolicySpec> policies_;  // sorted by name
};

// Registers every built-in policy (builtin_policies.cc).
void RegisterBuiltinPolicies(PolicyRegistry& registry);

// The registry of built-in policies, built on first use.
const PolicyRegistry& BuiltinPolicies();

}  // namespace hbmsim

#endif  // HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_
