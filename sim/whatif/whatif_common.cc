#include "sim/whatif/whatif_common.h"

#include <variant>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/scenario_config.h"

namespace hbmsim::sim {

absl::StatusOr<std::string> AllocatorFor(std::string_view given, const Scenario& scenario, std::string& chosen) {
  if (!given.empty()) return std::string(given);
  const Recording& r = *scenario.recording;
  std::string why;
  if (const PolicySpec* p = RecordedPolicy(r, &why)) {
    chosen = fmt::format("no --allocator: {}, {} (--allocator picks another)", p->name, why);
    return p->name;
  }
  const std::string* named = r.facts().metadata.Find(kAllocatorKey);
  return absl::InvalidArgumentError(fmt::format(
      "--allocator: required: {} ({}) does not say which allocator ran the job{} "
      "(built-in: {}; or a .yaml config file)",
      r.path(), TraceFormatName(r.format()),
      named != nullptr
          ? fmt::format(" that hbmsim models (its # {}: {} is none of them)", kAllocatorKey, *named)
          : "",
      BuiltinPolicies().Names()));
}

std::string RuntimeAllocators(const Scenario& scenario, std::string& chosen) {
  std::string why;
  const PolicySpec* made = RecordedPolicy(*scenario.recording, &why);
  std::vector<std::string> names;
  if (made != nullptr) names.push_back(made->name);
  for (const PolicySpec* p : BuiltinPolicies().RuntimePolicies()) {
    if (p != made) names.push_back(p->name);
  }
  const std::string list = fmt::format("{}", fmt::join(names, ","));
  chosen = fmt::format(
      "no --allocators: {}, the runtimes' allocators hbmsim models{} (--allocators picks others)",
      fmt::join(names, ", "),
      made != nullptr ? fmt::format(", {} first: {}", made->name,
                                    BuiltinPolicies().MadeFormat(scenario.recording->format())
                                        ? fmt::format("its runtime writes {} recordings",
                                                      TraceFormatName(scenario.recording->format()))
                                        : why)
                      : "");
  return list;
}

absl::StatusOr<AllocatorConfig> ResolveWithSets(std::string_view allocator, const std::vector<std::string>& sets,
                                                const Scenario& scenario, std::vector<std::string>* applied) {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), allocator);
  if (!c.ok()) return c.status();
  std::vector<std::string> taken = ApplyRecordedSettings(scenario, *c);
  if (applied != nullptr) *applied = std::move(taken);
  for (const std::string& kv : sets) {
    if (absl::Status s = ApplySetOption(*c, kv); !s.ok()) return s;
  }
  return c;
}

absl::StatusOr<std::vector<AllocatorConfig>> ParseAllocatorList(std::string_view list, const Scenario& scenario) {
  std::vector<AllocatorConfig> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view entry = list.substr(start, comma - start);
    std::vector<std::string> parts;
    size_t p = 0;
    while (p <= entry.size()) {
      const size_t colon = std::min(entry.find(':', p), entry.size());
      parts.emplace_back(entry.substr(p, colon - p));
      p = colon + 1;
    }
    if (parts[0].empty())
      return absl::InvalidArgumentError(fmt::format("--allocators {}: empty entry", list));
    absl::StatusOr<AllocatorConfig> c =
        ResolveWithSets(parts[0], std::vector<std::string>(parts.begin() + 1, parts.end()), scenario);
    if (!c.ok()) return c.status();
    out.push_back(*std::move(c));
    start = comma + 1;
  }
  return out;
}

std::string DeviceLine(const Scenario& scenario, const ScenarioSurvey& survey) {
  if (scenario.device) return scenario.DeviceText();
  if (!survey.device) return "none (no events)";
  const uint64_t others = survey.events_read - survey.events_replayed;
  return fmt::format("{} (the first event's; {} events on other devices skipped)", survey.device->value(),
                     others);
}

nlohmann::ordered_json AllocatorJson(const AllocatorConfig& config) {
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  // Not a structured binding: clang 14 (the sanitizer build) cannot capture one in a lambda.
  for (const auto& entry : config.options.entries()) {
    const std::string& name = entry.first;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Bytes>) {
            options[name] = v.value();
          } else {
            options[name] = v;
          }
        },
        entry.second);
  }
  return {{"name", config.policy->name}, {"options", options}};
}

}  // namespace hbmsim::sim
