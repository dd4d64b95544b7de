// The allocator policies hbmsim can build: for each a name, a one-line summary,
// its option specs and a factory. Registration is an explicit function
// (RegisterBuiltinPolicies) rather than static initializers, which the linker
// drops from static libraries.
//
// Adding a policy: a folder sim/policies/<p>/ with `absl::Status
// Register<P>Policy(PolicyRegistry&)` (a handle per option, its options in an
// OptionTable over the policy's Options struct, MakePolicySpec, its texts and
// capabilities) returning what Register says, and one line in
// sim/policies/builtin_policies.cc; docs/contributing.md has the checklist.
#ifndef HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_
#define HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/buffer_interval.h"
#include "allocator/core/allocator.h"
#include "nlohmann/json.hpp"
#include "sim/config/option.h"
#include "sim/config/option_table.h"
#include "sim/config/state_view.h"
#include "sim/engine/replay_engine.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "trace/core/recorded.h"
#include "trace/core/trace_format.h"

namespace hbmsim::allocator {
class LimitWindowPolicy;  // allocator/core/limit_window.h
}  // namespace hbmsim::allocator

namespace hbmsim::sim {

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
  // The recordings this policy's runtime writes: one of them replays under
  // this policy when the user names none (AllocatorFor). At most one policy
  // claims a format.
  std::vector<TraceFormat> made_formats;
  // The recorded settings (and the device) as edits of the row's options
  // (its OptionName handles), applied like --set to every option still at its
  // default.
  std::function<std::vector<OptionEdit>(const RecordedSettings&, DeviceId)> recorded_options;
  // Installs the start state in an allocator this policy's factory built (so
  // the hook may rely on its type). Errors name the segment.
  std::function<absl::StatusOr<std::vector<SeededBlock>>(Allocator&, const std::vector<StartSegment>&)> seed;
  // Releases the cached memory the recording released on its own
  // (torch.cuda.empty_cache()).
  std::function<void(Allocator&)> empty_cache;
  // The runtime's message for the last failed request ("" if none).
  std::function<std::string(const Allocator&)> oom_message;
  // The settings a run of this policy used, under the keys its runtime's own
  // recording writes them (a PyTorch snapshot's allocator_settings, with
  // PYTORCH_CUDA_ALLOC_CONF), so an export says what really ran. Unset: the
  // runtime records none.
  std::function<nlohmann::ordered_json(const Allocator&)> settings_of;
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
// How reports show one policy, in its runtime's own words (sim/policies/<p>/). A row
// leaves a member empty for the generic text; Register fills it in, so every
// registered policy has both.
struct PolicyTexts {
  // Called right after a failed request, while the allocator is in that state:
  // what the runtime would have printed, then the memory it failed in.
  std::function<std::string(const Allocator&, const FailureRecord&)> at_failure;
  // The stats block of the text report, under the names the runtime's users
  // know (TF/JAX's AllocatorStats, PyTorch's memory_stats()).
  std::function<std::string(const Allocator&)> stats;
};

class LogReader;  // sim/engine/log_reader.h

// What lets `size` share the work of its trials under a policy
// (sim/whatif/checkpoints.h): the policy's limit windows, and the engine's
// loop over a captured log with direct calls to the policy's own type. Each
// takes an allocator the row's factory built. Unset: each trial replays on
// its own, through the Allocator interface (the answers are the same, only
// slower). SharedTrialsFor<P>() (sim/policies/core/shared_trials_for.h) fills
// both for a policy type P that is a LimitWindowPolicy.
struct SharedTrialSupport {
  LimitWindowPolicy* (*windows)(Allocator&) = nullptr;
  absl::StatusOr<ReplaySummary> (*plain_loop)(ReplayEngine&, LogReader&, Allocator&) = nullptr;
};

// A change a user can make to a job that ran a policy, tried by `hbmsim
// advise`: `sets` edit the policy's options (through its handles), or
// `policy` names another registry row to run instead (BFC's
// TF_GPU_ALLOCATOR=cuda_malloc_async is the cuda_async row); `how` is the
// exact setting the user writes.
struct AdviceRow {
  std::string policy;  // "": the same policy
  std::vector<OptionEdit> sets;
  std::string how;
};

// One rule of PolicySpec::decides_as: while `when` holds, the option `as`
// names has no effect, and a run decides as if it had `as`'s value (bfc:
// without allow_growth, garbage_collection never collects).
struct DecidesAsRule {
  OptionEdit when;
  OptionEdit as;
};

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
  PolicyTexts texts;
  // The options that run for the given values, in the same order: each
  // member read back from the typed options the factory would build (so an
  // alloc_conf key shows as the option it sets). Empty: the values as given.
  std::function<absl::StatusOr<OptionValues>(const OptionValues&)> effective_options;
  // When an option has no effect under the others (DecidesAs). Empty: every
  // option always counts.
  std::vector<DecidesAsRule> decides_as;
  // `size`'s fast path: limit windows and a direct loop; unset: plain trials.
  SharedTrialSupport shared_trials;
  // `inspect`'s analysis of a state this policy holds; unset: none.
  StateAnalysisSupport state_analysis;
  // What `advise` tries for a job that ran this policy; empty: nothing to try.
  std::vector<AdviceRow> advice;
  // The allocator of a runtime jobs run on (TF/JAX's BFC, PyTorch's caching
  // allocator, cudaMallocAsync, the TPU runtime), not a textbook baseline or a
  // bound: `hbmsim compare TRACE` without --allocators compares these.
  bool models_a_runtime = false;
  // The lower bound of live bytes: places nothing and fits whenever the live
  // requested bytes fit the limit. A report's peak breakdown (by tag, op,
  // frame) replays under it, as no placement can change what is live.
  bool bounds_live_bytes = false;
  // How a user sets the limit as a fraction of the device's memory, with `{}`
  // for the fraction ("XLA_PYTHON_CLIENT_MEM_FRACTION={}"); "" when the
  // framework has no such setting.
  std::string limit_setting;

  const OptionSpec* FindOption(std::string_view option) const;
  // The effective options a run with `ran` decides exactly as: each option
  // that has no effect under the others set as its decides_as rule says.
  // Runs of two configurations with equal ones give the same results, so
  // `compare` and `advise` work one out once.
  OptionValues DecidesAs(OptionValues ran) const;
  // Whether `edit` names an option of this row and holds a value it accepts:
  // "allow_growth: no such option (known: ...)" otherwise.
  absl::Status CheckEdit(const OptionEdit& edit) const;
  // "allow_growth, garbage_collection, ..." (spec order), for error messages.
  std::string KnownOptions() const;
};

// A registry row from an option table: the table's specs, a factory that
// builds the typed options and hands them to `make`, and the effective
// options read back from them.
template <typename Options>
PolicySpec MakePolicySpec(std::string name, std::string summary, OptionTable<Options> table,
                          std::function<absl::StatusOr<std::unique_ptr<Allocator>>(const Options&)> make) {
  auto shared = std::make_shared<const OptionTable<Options>>(std::move(table));
  PolicySpec spec;
  spec.name = std::move(name);
  spec.summary = std::move(summary);
  spec.options = shared->Specs();
  spec.factory = [shared, make = std::move(make)](
                     Bytes limit, const OptionValues& values) -> absl::StatusOr<std::unique_ptr<Allocator>> {
    absl::StatusOr<Options> o = shared->Build(limit, values);
    if (!o.ok()) return o.status();
    return make(*o);
  };
  spec.effective_options = [shared](const OptionValues& values) { return shared->Effective(values); };
  return spec;
}

class PolicyRegistry {
 public:
  // Fails on a duplicate name, a format another row claims, or an advice row
  // or decides_as rule naming an option the row lacks (programming errors:
  // RegisterBuiltinPolicies passes them on, and every command stops on one).
  absl::Status Register(PolicySpec spec);
  // Fails when an advice row names a policy that is not registered, or an
  // option that policy lacks: checked once every row is in.
  absl::Status CheckAdviceTargets() const;
  const PolicySpec* Find(std::string_view name) const;
  // The policy whose runtime writes recordings of `format`, or nullptr.
  const PolicySpec* MadeFormat(TraceFormat format) const;
  // The first row (in name order) with bounds_live_bytes, or nullptr.
  const PolicySpec* LiveBytesBound() const;
  // The rows with models_a_runtime, in name order.
  std::vector<const PolicySpec*> RuntimePolicies() const;
  // Names in alphabetical order: "bfc, torch, tpu".
  std::string Names() const;
  const std::vector<PolicySpec>& policies() const { return policies_; }

 private:
  std::vector<PolicySpec> policies_;  // sorted by name
};

// Registers every built-in policy (sim/policies/builtin_policies.cc); the
// first registration error, naming the policy.
absl::Status RegisterBuiltinPolicies(PolicyRegistry& registry);

// The registry of built-in policies, built on first use (defined beside the
// list, in hbm_policies: whoever asks for it links the policies).
const PolicyRegistry& BuiltinPolicies();
// What building it said: OK, or the registration error (cli_run.cc stops
// every command on it, exit 3).
const absl::Status& BuiltinPoliciesStatus();

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_POLICY_REGISTRY_H_
