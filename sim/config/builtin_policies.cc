// The list of built-in policies. A new policy adds one line here and a
// sim/config/<name>_policy.cc with its options and factory.
#include "sim/config/policy_registry.h"

namespace hbmsim {

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

}  // namespace hbmsim
