#include "sim/scenario/scenario_config.h"

#include "fmt/format.h"
#include "trace/core/numbers.h"

namespace hbmsim {
namespace {

const OptionValue* Find(const OptionValues& values, std::string_view name) {
  for (const auto& [k, v] : values.entries()) {
    if (k == name) return &v;
  }
  return nullptr;
}

absl::StatusOr<LimitChoice> AutoLimit(const Scenario& s) {
  if (s.recorded_oom) {
    return LimitChoice{s.recorded_oom->capacity, "auto (reserved at the recorded OOM + its device_free)"};
  }
  std::string hint;
  if (const std::optional<DeviceId> other = s.OtherDeviceWithOom()) {
    hint = fmt::format(" (device {} has one: pass --device {})", other->value(), other->value());
  }
  if (!s.device) {
    return absl::InvalidArgumentError(
        fmt::format("--bytes-limit auto: {} records no oom; pass a size", s.path()));
  }
  return absl::InvalidArgumentError(fmt::format("--bytes-limit auto: {} records no oom on device {}{}; pass a size",
                                                s.path(), s.device->value(), hint));
}

}  // namespace

std::vector<std::string> ApplyRecordedSettings(const Scenario& scenario, AllocatorConfig& config) {
  // A compiled program has no start state, yet its settings say how it was packed.
  if (!scenario.device) return {};
  if (!scenario.start_summary && !scenario.recording->metadata().Find("compiled_program")) return {};
  // Per device: a profile records each allocator's own framework and host facts.
  return ApplyRecordedSettings(scenario.recording->DeviceSettings(*scenario.device).value_or(RecordedSettings{}),
                               *scenario.device, config);
}

std::vector<std::string> ApplyRecordedSettings(const RecordedSettings& settings, DeviceId device,
                                               AllocatorConfig& config) {
  std::vector<std::string> applied;
  const RecordingHooks& hooks = config.policy->recording;
  if (!hooks.recorded_options) return applied;
  const OptionValues defaults = OptionValues::Defaults(config.policy->options);
  for (const auto& [name, text] : hooks.recorded_options(settings, device)) {
    const OptionSpec* spec = config.policy->FindOption(name);
    const OptionValue* now = Find(config.options, name);
    const OptionValue* def = Find(defaults, name);
    if (spec == nullptr || now == nullptr || def == nullptr || *now != *def) continue;
    absl::StatusOr<OptionValue> v = ParseOptionValue(*spec, text);
    if (!v.ok() || *v == *def) continue;  // a recorded value the option cannot hold stays at the default
    applied.push_back(fmt::format("{}={}", name, FormatOptionValue(*v)));
    config.options.Set(name, *std::move(v));
  }
  return applied;
}

absl::StatusOr<std::optional<LimitChoice>> LimitFromFlag(const Scenario& s, std::string_view flag) {
  if (flag.empty()) return std::optional<LimitChoice>();
  if (flag == "auto") {
    absl::StatusOr<LimitChoice> a = AutoLimit(s);
    if (!a.ok()) return a.status();
    return std::optional<LimitChoice>(*a);
  }
  absl::StatusOr<Bytes> b = ParseBytes(flag, /*allow_more_units=*/true);
  if (!b.ok()) {
    return absl::InvalidArgumentError(fmt::format("--bytes-limit {}: {}", flag, std::string(b.status().message())));
  }
  // TF logs print MiB as "MB": a number copied with "MB" gets a note saying so.
  const std::string note = DecimalUnitNote(flag);
  return std::optional<LimitChoice>(
      LimitChoice{*b, note.empty() ? std::string("--bytes-limit") : fmt::format("--bytes-limit, {}", note)});
}

absl::StatusOr<LimitChoice> ResolveLimit(const Scenario& s, const AllocatorConfig& config,
                                         std::string_view flag) {
  absl::StatusOr<std::optional<LimitChoice>> given = LimitFromFlag(s, flag);
  if (!given.ok()) return given.status();
  if (*given) return **given;
  if (config.bytes_limit) {
    return LimitChoice{*config.bytes_limit, config.source == "built-in" ? "--set bytes_limit" : config.source};
  }
  if (s.recorded_oom) return AutoLimit(s);
  if (s.recorded_limit) {
    return LimitChoice{s.recorded_limit->limit, fmt::format("the recording's {}", s.recorded_limit->how)};
  }
  if (const std::string* device_bytes = s.recording->metadata().Find("device_bytes")) {
    absl::StatusOr<Bytes> b = ParseBytes(*device_bytes, /*allow_more_units=*/true);
    if (!b.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: metadata device_bytes: {}", s.path(), std::string(b.status().message())));
    }
    return LimitChoice{*b, "the trace's # device_bytes"};
  }
  if (s.start_summary && config.policy->runs_unlimited) {
    return LimitChoice{Bytes::Max(), "none: unlimited (the recording records no OOM)"};
  }
  if (s.start_summary) {
    return absl::InvalidArgumentError(fmt::format("--bytes-limit: {} records no oom on device {}; pass a size",
                                                  s.path(), s.device->value()));
  }
  return absl::InvalidArgumentError(
      fmt::format("no memory limit: pass --bytes-limit, set bytes_limit in the allocator config, or "
                  "record `# device_bytes: N` in {}",
                  s.path()));
}

}  // namespace hbmsim
