// `hbmsim advise RECORDING --allocator NAME|FILE.yaml [--set K=V] [--bytes-limit
// L|auto] [--device N] [--start-state seed|place] [--jobs N] [--json OUT]`: the
// changes a user can make to the job's allocator (its registry row's advice,
// sim/whatif/advice.h), each with the minimum limit it needs, whether it fits
// at L and what it saves; for a recording that began warm, both as recorded
// and from a fresh start (sim/whatif/fresh_start.h).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/scenario_flags.h"
#include "sim/cli/size_progress.h"
#include "sim/layer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"
#include "sim/whatif/advice.h"
#include "sim/whatif/fresh_start.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

int Fail(const absl::Status& s) {
  const bool internal = s.code() == absl::StatusCode::kInternal;
  PrintError(fmt::format("hbmsim advise: {}{}", internal ? "internal error: " : "", OneLineMessage(std::string(s.message()))));
  return internal ? kExitInternal : kExitBadInput;
}

class AdviseCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("RECORDING", recording_, "the trace, snapshot or dump of the job");
    app.add_option("--allocator", allocator_,
                   "the allocator the job ran (a built-in policy or a YAML config; default: the one that wrote "
                   "the recording: torch for a PyTorch snapshot, bfc for a TF/JAX profile)");
    AddSetFlag(app, sets_, "KEY=VALUE: a setting the job ran with (repeatable)");
    app.add_option("--bytes-limit", bytes_limit_,
                   "the limit L each change is checked at (units allowed; auto: the capacity a recorded OOM "
                   "implies; default: the limit the recording says the job ran under: its OOM's capacity, a profile's limit, "
                   "a trace's # device_bytes)");
    app.add_option("--device", device_, "advise on this device (default as `compare`)");
    AddStartStateFlag(
        app, start_state_,
        "a recording that starts mid-run: seed (default) installs its segments as recorded and also "
        "answers from a fresh start; place allocates its live blocks through the policy (a new run only)");
    AddJobsFlag(app, jobs_, "trials");
    app.add_option("--device-memory", device_memory_,
                   "the device's total memory, so each minimum limit is also said as a fraction setting "
                   "(default: the capacity a recorded OOM states)");
    app.add_option("--json", json_, "write the advice as JSON here");
  }
  int Run() override;

 private:
  // The advice at the limit, and for a recording that began warm the same
  // again from a fresh start (a new run of the job).
  struct Answers {
    Advice advice;
    std::optional<Advice> fresh;
  };
  absl::StatusOr<Answers> AdviseAsRecordedAndFresh(const Scenario& scenario, const ScenarioSurvey& survey,
                                                   const AllocatorConfig& today, std::optional<Bytes> limit,
                                                   const SizeOptions& options) const;
  absl::StatusOr<std::optional<Bytes>> DeviceMemory(const Scenario& scenario) const;
  absl::Status WriteAdvice(const Scenario& scenario, const ScenarioSurvey& survey,
                           const std::optional<LimitChoice>& limit, const Answers& answers,
                           std::optional<Bytes> device_memory, const io::OutputSet& outputs) const;

  std::string recording_, allocator_, bytes_limit_, device_, json_, device_memory_;
  std::string start_state_ = "seed";
  std::vector<std::string> sets_;
  int jobs_ = DefaultJobs();
};

int AdviseCommand::Run() {
  if (recording_.empty()) {
    PrintError(fmt::format("hbmsim advise: pass RECORDING (and --allocator NAME, the policy the job ran)"));
    return kExitBadInput;
  }
  if (jobs_ < 1) return Fail(absl::InvalidArgumentError(fmt::format("--jobs {}: must be at least 1", jobs_)));
  absl::StatusOr<ScenarioRequest> request = ParseScenarioRequest(device_, start_state_);
  if (!request.ok()) return Fail(request.status());
  // --json is checked against the inputs and created before the trials (trace/io/output_set.h).
  absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open(
      WithPartnerFiles({{"RECORDING", recording_}, {"--allocator", allocator_}}), {{"--json", json_}});
  if (!outputs.ok()) return Fail(outputs.status());
  absl::StatusOr<Scenario> scenario = OpenScenario(recording_, *request);
  if (!scenario.ok()) return Fail(scenario.status());
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, *scenario, chosen);
  if (!allocator.ok()) return Fail(allocator.status());
  if (!chosen.empty()) Note("hbmsim advise: " + chosen);
  allocator_ = *allocator;
  SizeProgressLine progress(stderr, viz::Progress::IsTerminal(stderr), "hbmsim advise");
  absl::StatusOr<ScenarioSurvey> survey =
      SurveyScenario(*scenario, SurveyOptions{.observer = progress.survey_observer()});
  if (!survey.ok()) return Fail(survey.status());
  absl::StatusOr<AllocatorConfig> today = ResolveWithSets(allocator_, sets_, *scenario);
  if (!today.ok()) return Fail(today.status());
  // Without --bytes-limit, the limit the job ran under, when the recording
  // says (its OOM's capacity, its stated limit, # device_bytes).
  absl::StatusOr<std::optional<LimitChoice>> limit =
      bytes_limit_.empty() ? RecordedLimitChoice(*scenario) : LimitFromFlag(*scenario, bytes_limit_);
  if (!limit.ok()) return Fail(limit.status());
  const std::optional<Bytes> l = *limit ? std::optional<Bytes>((*limit)->limit) : std::nullopt;
  SizeOptions options{256, jobs_};
  options.on_progress = progress.Callback();
  absl::StatusOr<Answers> answers = AdviseAsRecordedAndFresh(*scenario, *survey, *today, l, options);
  if (!answers.ok()) return Fail(answers.status());
  progress.Finish();
  absl::StatusOr<std::optional<Bytes>> device_memory = DeviceMemory(*scenario);
  if (!device_memory.ok()) return Fail(device_memory.status());
  if (absl::Status s = WriteAdvice(*scenario, *survey, *limit, *answers, *device_memory, *outputs); !s.ok()) {
    return Fail(s);
  }
  if (absl::Status s = outputs->CommitAll(); !s.ok()) return Fail(s);
  return kExitOk;
}

absl::StatusOr<AdviseCommand::Answers> AdviseCommand::AdviseAsRecordedAndFresh(
    const Scenario& scenario, const ScenarioSurvey& survey, const AllocatorConfig& today,
    std::optional<Bytes> limit, const SizeOptions& options) const {
  absl::StatusOr<Advice> advice = Advise(scenario, survey, today, allocator_, sets_, limit, options);
  if (!advice.ok()) return advice.status();
  Answers answers{*std::move(advice), std::nullopt};
  if (BeganWarm(scenario, today)) {
    absl::StatusOr<Advice> f = Advise(FreshStartOf(scenario), survey, today, allocator_, sets_, limit, options);
    if (!f.ok()) return f.status();
    answers.fresh = *std::move(f);
  }
  return answers;
}

// --device-memory, else the capacity a recorded OOM states, else none.
absl::StatusOr<std::optional<Bytes>> AdviseCommand::DeviceMemory(const Scenario& scenario) const {
  if (!device_memory_.empty()) {
    absl::StatusOr<Bytes> m = ParseBytes(device_memory_, /*allow_more_units=*/true);
    if (!m.ok() || m->value() == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "--device-memory {}: {}", device_memory_, m.ok() ? "must be more than 0" : std::string(m.status().message())));
    }
    return *m;
  }
  if (scenario.recorded_oom && scenario.recorded_oom->capacity.value() > 0) return scenario.recorded_oom->capacity;
  return std::nullopt;
}

absl::Status AdviseCommand::WriteAdvice(const Scenario& scenario, const ScenarioSurvey& survey,
                                        const std::optional<LimitChoice>& limit, const Answers& answers,
                                        std::optional<Bytes> device_memory, const io::OutputSet& outputs) const {
  const std::optional<Bytes> l = limit ? std::optional<Bytes>(limit->limit) : std::nullopt;
  std::string text = AdviceText(scenario, survey, l, answers.advice, device_memory, limit ? limit->source : "");
  if (answers.fresh) text += FreshStartAdviceText(l, *answers.fresh);
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return s;
  if (json_.empty()) return absl::OkStatus();
  nlohmann::ordered_json j = AdviceJson(scenario, l, answers.advice, device_memory);
  j["start_state"] = start_state_;
  j["fresh_start"] = answers.fresh ? AdviceJson(FreshStartOf(scenario), l, *answers.fresh, device_memory)
                                   : nlohmann::ordered_json();
  return outputs.Write("--json", JsonText(j, 2) + "\n");
}

const CommandRegistration kAdvise(
    "advise", "which setting of the job's allocator would fit: each change's minimum limit and saving",
    []() -> std::unique_ptr<Command> { return std::make_unique<AdviseCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
