// The policy list of the programs in tests/sim/policies: the built-in list and
// one line more. It defines BuiltinPolicies() (and what registering said) over that longer list, which
// replaces the built-in registry's weak definitions (sim/policies/
// builtin_policies.cc), so every command these programs run in-process
// knows `next_fit` as it knows `bfc`.
#include "sim/layer.h"
#include "sim/config/policy_registry.h"

namespace hbmsim::sim {

absl::Status RegisterNextFitPolicy(PolicyRegistry& registry);  // next_fit/policy/next_fit_policy.cc

namespace {

struct TestRegistry {
  PolicyRegistry registry;
  absl::Status status;
};

const TestRegistry& Rows() {
  static const TestRegistry* const built = [] {
    auto* t = new TestRegistry();
    t->status = RegisterBuiltinPolicies(t->registry);
    if (t->status.ok()) t->status = RegisterNextFitPolicy(t->registry);  // the one list line a new policy adds
    return t;
  }();
  return *built;
}

}  // namespace

const PolicyRegistry& BuiltinPolicies() { return Rows().registry; }

const absl::Status& BuiltinPoliciesStatus() { return Rows().status; }

}  // namespace hbmsim::sim
