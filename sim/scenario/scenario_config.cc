#include "sim/scenario/scenario_config.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"
#include "sim/config/device_presets.h"
#include "sim/layer.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim {
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

// Sets each (option, value) on an option still at its default; a value the
// option cannot hold, or an unknown option, is left alone. Returns "key=value"
// for each option set.
std::vector<std::string> ApplyAtDefaults(const std::vector<std::pair<std::string, std::string>>& edits,
                                         AllocatorConfig& config) {
  std::vector<std::string> applied;
  const OptionValues defaults = OptionValues::Defaults(config.policy->options);
  for (const auto& [name, text] : edits) {
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

// The words of `# allocator_settings:`, split at spaces.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

// Each word split at its first '='. Checked when the recording opens
// (CheckHeaderSettings), so every word is KEY=VALUE here.
std::vector<std::pair<std::string, std::string>> SplitEdits(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> edits;
  for (const std::string_view word : Words(text)) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    edits.emplace_back(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
  }
  return edits;
}

// Whether the header's settings and limit are of the scenario's device: the
// header names none, or names it.
bool HeaderIsOfDevice(const Scenario& s) {
  absl::StatusOr<std::optional<DeviceId>> named = HeaderDevice(*s.recording);
  if (!named.ok() || !*named) return true;  // a bad # device fails the scenario before any run
  return s.device == **named;
}

// KEY itself, or "KEY.device_N" for a decimal N.
bool IsKeyOrPerDevice(std::string_view name, std::string_view key) {
  if (name == key) return true;
  const std::string prefix = fmt::format("{}.device_", key);
  return name.starts_with(prefix) && ParseU64(name.substr(prefix.size())).ok();
}

bool SettingsApply(const Recording& recording, DeviceId device) {
  return recording.facts().device(device).start_summary.has_value() || IsCompiledProgram(recording);
}

}  // namespace

bool IsCompiledProgram(const Recording& recording) {
  return recording.facts().metadata.Find("compiled_program") != nullptr;
}

std::string PerDeviceKey(std::string_view key, DeviceId device) {
  return fmt::format("{}.device_{}", key, device.value());
}

HeaderValue HeaderValueFor(const Scenario& scenario, std::string_view key) {
  const TraceMetadata& header = scenario.recording->facts().metadata;
  if (scenario.device) {
    std::string own = PerDeviceKey(key, *scenario.device);
    if (const std::string* value = header.Find(own)) return {std::move(own), value};
  }
  return {std::string(key), HeaderIsOfDevice(scenario) ? header.Find(key) : nullptr};
}

bool HasHeaderSettings(const Recording& recording) {
  const auto& entries = recording.facts().metadata.entries;
  return std::any_of(entries.begin(), entries.end(),
                     [](const auto& e) { return IsKeyOrPerDevice(e.first, kAllocatorSettingsKey); });
}

absl::Status CheckHeaderSettings(const Recording& recording) {
  for (const auto& entry : recording.facts().metadata.entries) {
    // Named, not bound: a structured binding cannot be captured by clang's lambdas.
    const std::string& name = entry.first;
    const std::string& text = entry.second;
    if (!IsKeyOrPerDevice(name, kAllocatorSettingsKey)) continue;
    const auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(fmt::format("{}: metadata {}: {}", recording.path(), name, why));
    };
    const std::string* named = recording.facts().metadata.Find(kAllocatorKey);
    const PolicySpec* policy = named != nullptr ? BuiltinPolicies().Find(*named) : nullptr;
    if (policy == nullptr) {
      return bad(fmt::format("the settings of no allocator hbmsim models: # {} must name one ({})", kAllocatorKey,
                             BuiltinPolicies().Names()));
    }
    for (const std::string_view word : Words(text)) {
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos || eq == 0) return bad(fmt::format("'{}' is not KEY=VALUE", word));
      const std::string key(word.substr(0, eq));
      const OptionSpec* spec = policy->FindOption(key);
      if (spec == nullptr) return bad(fmt::format("{} has no option '{}'", policy->name, key));
      absl::StatusOr<OptionValue> v = ParseOptionValue(*spec, word.substr(eq + 1));
      if (!v.ok()) return bad(fmt::format("{}: {}", key, std::string(v.status().message())));
    }
  }
  return absl::OkStatus();
}

const PolicySpec* RecordedPolicy(const Recording& recording, std::string* why) {
  if (const PolicySpec* made = BuiltinPolicies().MadeFormat(recording.format())) {
    if (why != nullptr)
      *why = fmt::format("whose runtime writes {} recordings", TraceFormatName(recording.format()));
    return made;
  }
  const std::string* named = recording.facts().metadata.Find(kAllocatorKey);
  if (named == nullptr) return nullptr;
  const PolicySpec* p = BuiltinPolicies().Find(*named);
  if (p != nullptr && why != nullptr) *why = fmt::format("named by the trace's # {}", kAllocatorKey);
  return p;
}

std::vector<std::string> RecordedOptionEdits(const Recording& recording, const PolicySpec& policy, DeviceId device) {
  if (!SettingsApply(recording, device)) return {};
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), policy.name);
  if (!c.ok()) return {};
  return ApplyRecordedSettings(recording.facts().device(device).settings.value_or(RecordedSettings{}), device,
                               *c);
}

std::vector<std::string> ApplyRecordedSettings(const Scenario& scenario, AllocatorConfig& config) {
  const Recording& r = *scenario.recording;
  // A converted recording carries the settings as option edits, for the allocator it names.
  if (HasHeaderSettings(r)) {
    const std::string* named = r.facts().metadata.Find(kAllocatorKey);
    const std::string* edits = HeaderValueFor(scenario, kAllocatorSettingsKey).value;
    if (named == nullptr || *named != config.policy->name || edits == nullptr) return {};
    return ApplyAtDefaults(SplitEdits(*edits), config);
  }
  if (!scenario.device || !SettingsApply(r, *scenario.device)) return {};
  // Per device: a profile records each allocator's own framework and host facts.
  return ApplyRecordedSettings(r.facts().device(*scenario.device).settings.value_or(RecordedSettings{}),
                               *scenario.device, config);
}

std::vector<std::string> ApplyRecordedSettings(const RecordedSettings& settings, DeviceId device,
                                               AllocatorConfig& config) {
  const RecordingHooks& hooks = config.policy->recording;
  if (!hooks.recorded_options) return {};
  std::vector<std::pair<std::string, std::string>> edits;
  for (const OptionEdit& edit : hooks.recorded_options(settings, device)) {
    edits.emplace_back(std::string(edit.name), FormatOptionValue(edit.value));
  }
  return ApplyAtDefaults(edits, config);
}

absl::StatusOr<std::optional<LimitChoice>> LimitFromFlag(const Scenario& s, std::string_view flag) {
  if (flag.empty()) return std::optional<LimitChoice>();
  if (flag == "auto") {
    absl::StatusOr<LimitChoice> a = AutoLimit(s);
    if (!a.ok()) return a.status();
    return std::optional<LimitChoice>(*a);
  }
  absl::StatusOr<ParsedLimit> parsed =
      ParseLimitOrPreset(flag, "--bytes-limit");  // a size or a device preset
  if (!parsed.ok()) return parsed.status();
  return std::optional<LimitChoice>(LimitChoice{parsed->bytes, parsed->source});
}

absl::StatusOr<std::optional<LimitChoice>> RecordedLimitChoice(const Scenario& s) {
  using Choice = std::optional<LimitChoice>;
  if (s.recorded_oom) {
    absl::StatusOr<LimitChoice> a = AutoLimit(s);
    if (!a.ok()) return a.status();
    return Choice(*a);
  }
  if (s.recorded_limit) {
    return Choice(LimitChoice{s.recorded_limit->limit, fmt::format("the recording's {}", s.recorded_limit->how)});
  }
  const HeaderValue device_bytes = HeaderValueFor(s, kDeviceBytesKey);
  if (device_bytes.value == nullptr) return Choice();
  absl::StatusOr<Bytes> b = ParseBytes(*device_bytes.value, /*allow_more_units=*/true);
  if (!b.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: metadata {}: {}", s.path(), device_bytes.key, std::string(b.status().message())));
  }
  return Choice(LimitChoice{*b, fmt::format("the trace's # {}", device_bytes.key)});
}

absl::StatusOr<LimitChoice> ResolveLimit(const Scenario& s, const AllocatorConfig& config,
                                         std::string_view flag) {
  absl::StatusOr<std::optional<LimitChoice>> given = LimitFromFlag(s, flag);
  if (!given.ok()) return given.status();
  if (*given) return **given;
  if (config.bytes_limit) {
    return LimitChoice{*config.bytes_limit, config.source == "built-in" ? "--set bytes_limit" : config.source};
  }
  absl::StatusOr<std::optional<LimitChoice>> recorded = RecordedLimitChoice(s);
  if (!recorded.ok()) return recorded.status();
  if (*recorded) return **recorded;
  // A converted recording names the allocator that ran the job, and keeps the
  // limit its original stated as # device_bytes: without one, the original
  // recorded none, and replays unlimited as a snapshot does.
  const bool runtime_record = s.start_summary || s.recording->facts().metadata.Find(kAllocatorKey) != nullptr;
  if (runtime_record && config.policy->runs_unlimited) {
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

}  // namespace hbmsim::sim
