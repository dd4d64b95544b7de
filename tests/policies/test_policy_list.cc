// The policy list of the programs in tests/policies: the built-in list and
// one line more. It defines BuiltinPolicies() over that longer list, which
// replaces the built-in registry's weak definition (sim/policies/
// builtin_policies.cc), so every command these programs run in-process
// knows `next_fit` as it knows `bfc`.
#include "sim/config/policy_registry.h"

namespace hbmsim {

void RegisterNextFitPolicy(PolicyRegistry& registry);  // next_fit/policy/next_fit_policy.cc

const PolicyRegistry& BuiltinPolicies() {
  static const PolicyRegistry* const registry = [] {
    auto* r = new PolicyRegistry();
    RegisterBuiltinPolicies(*r);
    RegisterNextFitPolicy(*r);  // the one list line a new policy adds
    return r;
  }();
  return *registry;
}

}  // namespace hbmsim
