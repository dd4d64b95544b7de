// The `torch` policy's entry in the registry: PyTorch's CUDA caching allocator
// under PYTORCH_CUDA_ALLOC_CONF's own option names. `bytes_limit` is the
// device's capacity. `alloc_conf` takes a whole PYTORCH_CUDA_ALLOC_CONF string
// (as the job had it); the keys it mentions win over the typed options.
#include <variant>

#include "allocator/torch/torch_allocator.h"
#include "allocator/torch/torch_options.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

std::string FractionOrOff(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f < 1 ? "" : "must be >= 0 and < 1 (0 = off)";
}

std::string FractionOrUnset(const OptionValue& v) {
  const double f = std::get<double>(v);
  return f >= 0 && f <= 1 ? "" : "must be > 0 and <= 1 (0 = unset)";
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeTorch(Bytes bytes_limit, const OptionValues& o) {
  torch::TorchOptions options;
  options.capacity = bytes_limit;
  if (!o.GetBytes("max_split_size").is_zero()) options.max_split_size = o.GetBytes("max_split_size");
  options.max_non_split_rounding = o.GetBytes("max_non_split_rounding");
  options.garbage_collection_threshold = o.GetDouble("garbage_collection_threshold");
  options.expandable_segments = o.GetBool("expandable_segments");
  options.large_segment_size = o.GetBytes("large_segment_size");
  if (o.GetDouble("per_process_memory_fraction") > 0) {
    options.per_process_memory_fraction = o.GetDouble("per_process_memory_fraction");
  }
  options.device_index = static_cast<int>(o.GetInt("device_index"));
  options.fixed_retry_search = o.GetBool("fixed_retry_search");
  const std::string conf = o.GetString("alloc_conf");
  if (!conf.empty()) {
    absl::StatusOr<torch::TorchConfDelta> delta = torch::ParseAllocConf(conf);
    if (!delta.ok()) {
      return absl::InvalidArgumentError(fmt::format("alloc_conf: {}", std::string(delta.status().message())));
    }
    torch::ApplyConfDelta(*delta, options);
  }
  return std::make_unique<torch::TorchAllocator>(options);
}

OptionSpec Spec(std::string name, OptionType type, std::string default_text, std::string help,
                std::function<std::string(const OptionValue&)> check = {}) {
  return {std::move(name), type, std::move(default_text), std::move(help), {}, std::move(check)};
}

}  // namespace

RecordingHooks TorchRecordingHooks();  // torch_recording.cc

void RegisterTorchPolicy(PolicyRegistry& registry) {
  PolicySpec spec;
  spec.name = "torch";
  spec.summary = "PyTorch's native CUDA caching allocator (pools, block splitting, expandable segments)";
  spec.options = {
      Spec("alloc_conf", OptionType::kString, "",
           "a PYTORCH_CUDA_ALLOC_CONF string, e.g. expandable_segments:True,max_split_size_mb:128"),
      Spec("expandable_segments", OptionType::kBool, "false",
           "grow segments page by page instead of cudaMalloc"),
      Spec("max_split_size", OptionType::kBytes, "0", "blocks this large are never split (0 = unlimited)"),
      Spec("max_non_split_rounding", OptionType::kBytes, "20MiB",
           "an oversize request may take a cached block smaller than request + this"),
      Spec("large_segment_size", OptionType::kBytes, "20MiB", "segment size for 1-10 MiB requests"),
      Spec("garbage_collection_threshold", OptionType::kDouble, "0",
           "reclaim cached blocks above this fraction of the allowed memory (0 = off)", FractionOrOff),
      Spec("per_process_memory_fraction", OptionType::kDouble, "0",
           "torch.cuda.set_per_process_memory_fraction (0 = unset)", FractionOrUnset),
      Spec("device_index", OptionType::kInt, "0", "the GPU index printed in OOM messages"),
      Spec("fixed_retry_search", OptionType::kBool, "false",
           "search the pool again after releasing cached blocks (PyTorch PR 191302)"),
  };
  spec.factory = MakeTorch;
  spec.recording = TorchRecordingHooks();
  spec.runs_unlimited = true;
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
