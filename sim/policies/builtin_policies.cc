// The list of built-in policies: a new policy is one line here, beside its two
// folders, allocator/<name>/ and sim/policies/<name>/ (docs/contributing.md).
#include "sim/config/policy_registry.h"

namespace hbmsim {

void RegisterBaselinePolicies(PolicyRegistry& registry);
void RegisterBfcPolicy(PolicyRegistry& registry);
void RegisterCudaAsyncPolicy(PolicyRegistry& registry);
void RegisterTorchPolicy(PolicyRegistry& registry);
void RegisterTpuPolicy(PolicyRegistry& registry);

void RegisterBuiltinPolicies(PolicyRegistry& registry) {
  RegisterBaselinePolicies(registry);
  RegisterBfcPolicy(registry);
  RegisterCudaAsyncPolicy(registry);
  RegisterTorchPolicy(registry);
  RegisterTpuPolicy(registry);
}

// Weak, so that a test program can define the registry over a longer list
// (tests/policies/test_policy_list.cc adds a policy of its own to this one).
[[gnu::weak]] const PolicyRegistry& BuiltinPolicies() {
  static const PolicyRegistry* const registry = [] {
    auto* r = new PolicyRegistry();
    RegisterBuiltinPolicies(*r);
    return r;
  }();
  return *registry;
}

}  // namespace hbmsim
