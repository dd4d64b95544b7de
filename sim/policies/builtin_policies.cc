// The list of built-in policies: a new policy is one line here, beside its two
// folders, allocator/<name>/ and sim/policies/<name>/ (docs/contributing.md).
#include "sim/config/policy_registry.h"

namespace hbmsim::sim {

absl::Status RegisterBaselinePolicies(PolicyRegistry& registry);
absl::Status RegisterBfcPolicy(PolicyRegistry& registry);
absl::Status RegisterCudaAsyncPolicy(PolicyRegistry& registry);
absl::Status RegisterTorchPolicy(PolicyRegistry& registry);
absl::Status RegisterTpuPolicy(PolicyRegistry& registry);

absl::Status RegisterBuiltinPolicies(PolicyRegistry& registry) {
  for (absl::Status (*register_rows)(PolicyRegistry&) :
       {RegisterBaselinePolicies, RegisterBfcPolicy, RegisterCudaAsyncPolicy, RegisterTorchPolicy,
        RegisterTpuPolicy}) {
    if (absl::Status s = register_rows(registry); !s.ok()) return s;
  }
  // An advice row may name a policy registered after its own.
  return registry.CheckAdviceTargets();
}

namespace {

// The built-in rows and what registering them said, made once.
struct BuiltinRegistry {
  PolicyRegistry registry;
  absl::Status status;
};

const BuiltinRegistry& Builtins() {
  static const BuiltinRegistry* const built = [] {
    auto* b = new BuiltinRegistry();
    b->status = RegisterBuiltinPolicies(b->registry);
    return b;
  }();
  return *built;
}

}  // namespace

// Weak, so that a test program can define the registry over a longer list
// (tests/sim/policies/test_policy_list.cc adds a policy of its own to this one).
[[gnu::weak]] const PolicyRegistry& BuiltinPolicies() { return Builtins().registry; }

[[gnu::weak]] const absl::Status& BuiltinPoliciesStatus() { return Builtins().status; }

}  // namespace hbmsim::sim
