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
#include "allocator/baselines/offline_planner.h"
#include "allocator/core/allocator.h"
#include "sim/config/option.h"
#include "trace/core/recorded.h"

namespace hbmsim {

using AllocatorFactory =
    std::function<absl::StatusOr<std::unique_ptr<Allocator>>(Bytes bytes_limit, const OptionValues& options)>;

// A live block of a recording's start state placed by the policy.
struct SeededBlock {
  uint64_t id = 0;  // the buffer id of its `alloc tag=preexisting` event
  AllocResult placement;
};

// What a policy can take from a recording (sim/scenario applies them). Each
// hook may be unset: the policy then takes nothing of that kind, and a start
// state's live blocks are allocated through it like any other alloc.
struct RecordingHooks {
  // The recorded settings (and the device) as KEY=VALUE option edits, applied
  // like --set to every option still at its default.
  std::function<std::vector<std::pair<std::string, std::string>>(const RecordedSettings&, DeviceId)>
      recorded_options;
  // Installs the start state in an allocator this policy's factory built (so
  // the hook may rely on its type). Errors name the segment.
  std::function<absl::StatusOr<std::vector<SeededBlock>>(Allocator&, const std::vector<StartSegment>&)> seed;
  // Releases the cached memory the recording released on its own
  // (torch.cuda.empty_cache()).
  std::function<void(Allocator&)> empty_cache;
  // The runtime's message for the last failed request ("" if none).
  std::function<std::string(const Allocator&)> oom_message;
  // The runtime's own summary of the state at the end of a replay
  // (torch.cuda.memory_summary()), printed with the recording's section.
  std::function<std::string(const Allocator&)> summary_text;
};

// Builds one allocator for a limit.
using LimitedFactory = std::function<absl::StatusOr<std::unique_ptr<Allocator>>(Bytes bytes_limit)>;
// A policy that must see the whole trace before it places anything (offline):
// given the live intervals of the events the replay will apply, it plans once
// and returns the factory every replay of that trace shares.
using PlanningFactory =
    std::function<absl::StatusOr<LimitedFactory>(const OptionValues& options, std::vector<BufferInterval>)>;

struct PolicySpec {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;  // in the order reports list them
  AllocatorFactory factory;  // unset when `plan` is set
  PlanningFactory plan;      // set only for policies that need the whole trace first
  RecordingHooks recording;
  // true: the limit is a device capacity the policy can also run without
  // (Bytes::Max()), as a recording with no OOM never hit it.
  bool runs_unlimited = false;

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
