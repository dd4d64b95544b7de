// The `torch` policy's entry in the registry: PyTorch's CUDA caching allocator
// under PYTORCH_CUDA_ALLOC_CONF's own option names, each bound to its
// TorchOptions member. `bytes_limit` is the device's capacity. `alloc_conf`
// takes a whole PYTORCH_CUDA_ALLOC_CONF string (as the job had it); the keys it
// mentions win over the typed options, and reports show the result.
#include <variant>

#include "allocator/torch/torch_allocator.h"
#include "allocator/torch/torch_options.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/policies/torch/torch_option_names.h"
#include "sim/dumps/failure_texts.h"
#include "sim/dumps/stats_text.h"
#include "sim/policies/core/for_policy.h"
#include "sim/policies/core/shared_trials_for.h"
#include "sim/policies/torch/torch_state_view.h"
#include "sim/policies/torch/torch_texts.h"

namespace hbmsim::sim {
namespace {

using torch::TorchOptions;

std::string FractionOrOff(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f < 1 ? "" : "must be >= 0 and < 1 (0 = off)";
}

std::string FractionOrUnset(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f <= 1 ? "" : "must be > 0 and <= 1 (0 = unset)";
}

absl::Status ApplyAllocConf(const OptionValue& v, TorchOptions& options) {
  const std::string& conf = std::get<std::string>(v);
  if (conf.empty()) return absl::OkStatus();
  absl::StatusOr<torch::TorchConfDelta> delta = torch::ParseAllocConf(conf);
  if (!delta.ok()) return delta.status();
  torch::ApplyConfDelta(*delta, options);
  return absl::OkStatus();
}

// `roundup_power2_divisions=4` as alloc_conf would take it, so `advise` can
// try it without replacing the job's own alloc_conf string.
absl::Status ApplyRoundup(const OptionValue& v, TorchOptions& options) {
  const std::string& value = std::get<std::string>(v);
  if (value.empty()) return absl::OkStatus();
  return ApplyAllocConf(OptionValue(std::string("roundup_power2_divisions:") + value), options);
}

}  // namespace

RecordingHooks TorchRecordingHooks();  // torch_recording.cc

absl::Status RegisterTorchPolicy(PolicyRegistry& registry) {
  OptionTable<TorchOptions> t;
  t.Limit(&TorchOptions::capacity);
  t.AddEditor(TorchOption::kAllocConf,
              "a PYTORCH_CUDA_ALLOC_CONF string, e.g. expandable_segments:True,max_split_size_mb:128",
              ApplyAllocConf);
  t.Add(TorchOption::kExpandableSegments, &TorchOptions::expandable_segments,
        "grow segments page by page instead of cudaMalloc");
  t.AddZeroMeans(TorchOption::kMaxSplitSize, &TorchOptions::max_split_size, Bytes(torch::kUnlimited),
                 "blocks this large are never split (0 = unlimited)");
  t.Add(TorchOption::kMaxNonSplitRounding, &TorchOptions::max_non_split_rounding,
        "an oversize request may take a cached block smaller than request + this");
  t.Add(TorchOption::kLargeSegmentSize, &TorchOptions::large_segment_size,
        "segment size for 1-10 MiB requests");
  t.Add(TorchOption::kGarbageCollectionThreshold, &TorchOptions::garbage_collection_threshold,
        "reclaim cached blocks above this fraction of the allowed memory (0 = off)", FractionOrOff);
  t.Add(TorchOption::kPerProcessMemoryFraction, &TorchOptions::per_process_memory_fraction,
        "torch.cuda.set_per_process_memory_fraction (0 = unset)", FractionOrUnset);
  t.Add(TorchOption::kDeviceIndex, &TorchOptions::device_index, "the GPU index printed in OOM messages");
  t.Add(TorchOption::kFixedRetrySearch, &TorchOptions::fixed_retry_search,
        "search the pool again after releasing cached blocks (PyTorch PR 191302)");
  t.AddEditor(
      TorchOption::kRoundupPower2Divisions,
      "round requests to this many divisions of each power of two (as in alloc_conf: 4, or [256:1,>:8])",
      ApplyRoundup);
  PolicySpec spec = MakePolicySpec<TorchOptions>(
      "torch", "PyTorch's native CUDA caching allocator (pools, block splitting, expandable segments)",
      std::move(t), [](const TorchOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<torch::TorchAllocator>(o);
      });
  spec.texts.at_failure = ForPolicy(TorchFailureText, GenericFailureText);
  spec.texts.stats = ForPolicy(TorchStatsText, TensorFlowStatsText);
  spec.recording = TorchRecordingHooks();
  spec.state_analysis = TorchStateAnalysis();
  spec.runs_unlimited = true;
  spec.shared_trials = SharedTrialsFor<torch::TorchAllocator>();
  // The garbage collection threshold acts only under a per-process memory
  // fraction: PyTorch collects only when one is set (TorchAllocator::GcEnabled).
  spec.decides_as = {
      {{TorchOption::kPerProcessMemoryFraction, 0.0}, {TorchOption::kGarbageCollectionThreshold, 0.0}}};
  spec.advice = {
      {"", {{TorchOption::kExpandableSegments, true}}, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
      {"", {{TorchOption::kExpandableSegments, false}}, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False"},
      {"", {{TorchOption::kMaxSplitSize, Bytes::MiB(128)}}, "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128"},
      {"", {{TorchOption::kMaxSplitSize, Bytes::MiB(512)}}, "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512"},
      {"",
       {{TorchOption::kGarbageCollectionThreshold, 0.6}},
       "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6"},
      {"",
       {{TorchOption::kRoundupPower2Divisions, "4"}},
       "PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4"},
      {"",
       {{TorchOption::kRoundupPower2Divisions, "8"}},
       "PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:8"},
  };
  spec.limit_setting = "torch.cuda.set_per_process_memory_fraction({})";
  spec.models_a_runtime = true;
  return registry.Register(std::move(spec));
}

}  // namespace hbmsim::sim
