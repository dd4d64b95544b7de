#include "sim/whatif/fresh_start.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

std::string MinWords(const SizeResult& r) {
  return r.found
             ? fmt::format("{} B ({})", r.min_bytes_limit.value(), HumanReadableNumBytes(r.min_bytes_limit))
             : std::string("no limit up to 4EiB");
}

}  // namespace

bool BeganWarm(const Scenario& scenario, const AllocatorConfig& config) {
  return scenario.start_mode == StartStateMode::kSeed && scenario.start_summary &&
         scenario.start_summary->segments > 0 && !scenario.start_summary->reserved.is_zero() &&
         static_cast<bool>(config.policy->recording.seed);
}

Scenario FreshStartOf(const Scenario& scenario) {
  Scenario fresh = scenario;
  fresh.start_mode = StartStateMode::kPlace;
  return fresh;
}

absl::StatusOr<std::optional<StartAnswers>> SizeBothStarts(const Scenario& scenario,
                                                           const AllocatorConfig& config,
                                                           const SizeOptions& options) {
  if (!BeganWarm(scenario, config)) return std::optional<StartAnswers>();
  absl::StatusOr<SizedScenario> recorded = SizeScenario(scenario, config, options);
  if (!recorded.ok()) return recorded.status();
  absl::StatusOr<SizedScenario> fresh = SizeScenario(FreshStartOf(scenario), config, options);
  if (!fresh.ok()) return fresh.status();
  return std::optional<StartAnswers>(
      StartAnswers{scenario.start_summary->reserved, recorded->result, fresh->result});
}

std::string StartAnswersText(const StartAnswers& a, const std::string& policy) {
  const SizeResult& r = a.as_recorded;
  const SizeResult& f = a.fresh_start;
  std::string compare;
  if (r.found && f.found && r.min_bytes_limit != f.min_bytes_limit) {
    compare = f.min_bytes_limit < r.min_bytes_limit
                  ? fmt::format(", {} less", HumanReadableNumBytes(r.min_bytes_limit - f.min_bytes_limit))
                  : fmt::format(", {} more", HumanReadableNumBytes(f.min_bytes_limit - r.min_bytes_limit));
  }
  return fmt::format(
      "The recording began with {} B ({}) already reserved. As recorded (that process, its cache as it was) "
      "the "
      "job needs {} under {}; from a fresh start (a new run: its live blocks placed through {}, the cache "
      "rebuilt) it needs {}{}.\n",
      a.reserved_at_start.value(), HumanReadableNumBytes(a.reserved_at_start), MinWords(r), policy, policy,
      MinWords(f), compare);
}

nlohmann::ordered_json StartAnswersJson(const StartAnswers& a) {
  const auto min = [](const SizeResult& r) {
    return nlohmann::ordered_json{{"min_bytes_limit", r.found
                                                          ? nlohmann::ordered_json(r.min_bytes_limit.value())
                                                          : nlohmann::ordered_json()}};
  };
  return {{"reserved_at_start", a.reserved_at_start.value()},
          {"as_recorded", min(a.as_recorded)},
          {"fresh_start", min(a.fresh_start)}};
}

}  // namespace hbmsim::sim
