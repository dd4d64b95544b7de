// The trials `hbmsim replay` runs after the replay itself (replay_advice.h).
#include "sim/cli/replay_advice.h"

#include <cstdio>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "sim/cli/size_progress.h"
#include "sim/viz/progress.h"
#include "sim/whatif/advice.h"
#include "sim/whatif/fresh_start.h"
#include "sim/whatif/size_search.h"
#include "sim/whatif/whatif_common.h"

namespace hbmsim::sim::cli {
namespace {

void SetStartAnswers(const StartAnswers& a, const std::string& policy, ReplayReportInput& report) {
  report.start_answers_text = StartAnswersText(a, policy);
  report.start_answers_json = StartAnswersJson(a);
}

// A compiled program has no device limit: the question is its peak and what
// each policy needs, so the replay runs at the smallest limit it fits.
absl::StatusOr<LimitChoice> SmallestFittingLimit(const Scenario& scenario, const AllocatorConfig& config) {
  absl::StatusOr<SizedScenario> sized = SizeScenario(scenario, config, SizeOptions{});
  if (!sized.ok()) return sized.status();
  const SizeResult& r = sized->result;
  if (!r.found) return absl::InvalidArgumentError("no limit up to 4EiB fits this program");
  return LimitChoice{r.min_bytes_limit,
                     fmt::format("none given: a compiled program has no device limit; the smallest limit at "
                                 "which {} fits it (hbmsim size), {:.2f}% over its peak live {} B",
                                 config.policy->name, 100 * r.overhead, r.peak_live_bytes.value())};
}

}  // namespace

absl::StatusOr<LimitChoice> ReplayLimit(const Scenario& scenario, const AllocatorConfig& config,
                                        std::string_view flag) {
  absl::StatusOr<LimitChoice> limit = ResolveLimit(scenario, config, flag);
  if (!limit.ok() && flag.empty() && IsCompiledProgram(*scenario.recording)) {
    return SmallestFittingLimit(scenario, config);
  }
  return limit;
}

// A recording that began warm has two answers (sim/whatif/fresh_start.h),
// which the verdict says; when no advice was worked out, both are sized here.
// --no-advice skips them with the other trials.
void AddStartAnswers(const Scenario& scenario, const AllocatorConfig& config, const ReplayTrials& trials,
                     ReplayReportInput& report) {
  if (trials.no_advice || !report.start_answers_json.is_null() || !BeganWarm(scenario, config)) return;
  SizeProgressLine progress(stderr, viz::Progress::IsTerminal(stderr), "hbmsim replay: from a fresh start");
  SizeOptions options{256, trials.jobs};
  options.on_progress = progress.Callback();
  absl::StatusOr<std::optional<StartAnswers>> answers = SizeBothStarts(scenario, config, options);
  progress.Finish();
  if (!answers.ok()) {
    report.start_answers_text =
        fmt::format("From a fresh start: not worked out ({})\n", std::string(answers.status().message()));
  } else if (*answers) {
    SetStartAnswers(**answers, config.policy->name, report);
  }
}

// After a failure, the settings the policy offers (its registry row's advice)
// each replayed and sized, as `hbmsim advise` does, so the report says what
// would fit. Advice that cannot be worked out is said, not fatal.
void AddAdvice(const Scenario& scenario, const AllocatorConfig& config, const ReplayTrials& trials,
               ReplayReportInput& report) {
  if (trials.no_advice || trials.quiet || report.summary->failures == 0 || config.policy->advice.empty()) return;
  // On a terminal this can take many times the replay: a progress line.
  SizeProgressLine progress(stderr, viz::Progress::IsTerminal(stderr), "hbmsim replay: what would fit");
  absl::StatusOr<ScenarioSurvey> survey =
      SurveyScenario(scenario, SurveyOptions{.observer = progress.survey_observer()});
  SizeOptions options{256, trials.jobs};
  options.on_progress = progress.Callback();
  absl::StatusOr<Advice> advice = survey.ok() ? Advise(scenario, *survey, config, trials.allocator, trials.sets,
                                                       report.bytes_limit, options)
                                              : absl::StatusOr<Advice>(survey.status());
  progress.Finish();
  if (!advice.ok()) {
    report.advice_text = fmt::format("What would fit: not worked out ({})\n", std::string(advice.status().message()));
    return;
  }
  report.advice_text = AdviceSectionText(report.bytes_limit, *advice, survey->peak_live_bytes,
                                         StartStateDecides(scenario, *advice, survey->peak_live_bytes));
  report.advice_json = AdviceJson(scenario, report.bytes_limit, *advice);
  if (!BeganWarm(scenario, config)) return;
  // Began warm: every setting again from a fresh start; today's two rows are the verdict's two answers.
  const Scenario fresh_scenario = FreshStartOf(scenario);
  absl::StatusOr<Advice> fresh =
      Advise(fresh_scenario, *survey, config, trials.allocator, trials.sets, report.bytes_limit, options);
  if (!fresh.ok()) {
    report.advice_text +=
        fmt::format("From a fresh start: not worked out ({})\n", std::string(fresh.status().message()));
    return;
  }
  report.advice_text += FreshStartAdviceText(report.bytes_limit, *fresh);
  report.advice_json["fresh_start"] = AdviceJson(fresh_scenario, report.bytes_limit, *fresh);
  SetStartAnswers(
      StartAnswers{scenario.start_summary->reserved, advice->today.row.size, fresh->today.row.size},
      config.policy->name, report);
}

}  // namespace hbmsim::sim::cli
