// The list of built-in policies. A new policy adds one line here and a
// sim/config/<name>_policy.cc with its options and factory.
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

}  // namespace hbmsim
