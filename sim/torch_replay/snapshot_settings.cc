#include "sim/torch_replay/snapshot_settings.h"

#include <variant>

#include "allocator/torch/torch_options.h"
#include "fmt/format.h"

namespace hbmsim {
namespace {

// Sets `name` unless the config already departs from the default there.
void SetIfDefault(AllocatorConfig& config, const OptionValues& defaults, std::string_view name, OptionValue v,
                  std::vector<std::string>& applied) {
  const auto current = [&](const OptionValues& o) -> const OptionValue* {
    for (const auto& [k, value] : o.entries()) {
      if (k == name) return &value;
    }
    return nullptr;
  };
  const OptionValue* now = current(config.options);
  const OptionValue* def = current(defaults);
  if (now == nullptr || def == nullptr || *now != *def || v == *def) return;
  applied.push_back(fmt::format("{}={}", name, FormatOptionValue(v)));
  config.options.Set(name, std::move(v));
}

// "[1:0,2:4,...]" when any interval divides; PyTorch's all-zero default says nothing.
std::string DivisionsConf(const RecordedSettings& s) {
  bool any = false;
  std::string list;
  for (const auto& [mib, divisions] : s.roundup_power2_divisions) {
    any = any || divisions > 1;
    list += fmt::format("{}{}:{}", list.empty() ? "" : ",", mib, divisions);
  }
  return any ? fmt::format("roundup_power2_divisions:[{}]", list) : "";
}

// What the conf string sets, with the typed fields of allocator_settings
// (the allocator's own view after parsing) taking precedence.
torch::TorchConfDelta SettingsDelta(const RecordedSettings& s) {
  torch::TorchConfDelta d;
  if (absl::StatusOr<torch::TorchConfDelta> parsed = torch::ParseAllocConf(s.alloc_conf); parsed.ok()) {
    d = *parsed;
  }
  if (s.expandable_segments) d.expandable_segments = *s.expandable_segments;
  if (s.max_split_size && *s.max_split_size > 0) d.max_split_size = Bytes(*s.max_split_size);
  if (s.garbage_collection_threshold) d.garbage_collection_threshold = *s.garbage_collection_threshold;
  return d;
}

}  // namespace

std::vector<std::string> ApplySnapshotSettings(const std::optional<RecordedSettings>& settings,
                                               DeviceId device, AllocatorConfig& config) {
  std::vector<std::string> applied;
  if (config.policy == nullptr || config.policy->name != "torch") return applied;
  const OptionValues defaults = OptionValues::Defaults(config.policy->options);
  SetIfDefault(config, defaults, "device_index", static_cast<int64_t>(device.value()), applied);
  if (!settings) return applied;
  const RecordedSettings& s = *settings;
  const torch::TorchConfDelta d = SettingsDelta(s);
  if (d.expandable_segments)
    SetIfDefault(config, defaults, "expandable_segments", *d.expandable_segments, applied);
  if (d.max_split_size && *d.max_split_size != Bytes(torch::kUnlimited)) {
    SetIfDefault(config, defaults, "max_split_size", *d.max_split_size, applied);
  }
  if (d.max_non_split_rounding) {
    SetIfDefault(config, defaults, "max_non_split_rounding", *d.max_non_split_rounding, applied);
  }
  if (d.large_segment_size)
    SetIfDefault(config, defaults, "large_segment_size", *d.large_segment_size, applied);
  if (d.garbage_collection_threshold) {
    SetIfDefault(config, defaults, "garbage_collection_threshold", *d.garbage_collection_threshold, applied);
  }
  if (const std::string conf = DivisionsConf(s); !conf.empty()) {
    SetIfDefault(config, defaults, "alloc_conf", conf, applied);
  }
  return applied;
}

}  // namespace hbmsim
