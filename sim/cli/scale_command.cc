// `hbmsim scale --at V1 A --at V2 B [--at V FILE]... (--to N | --fit-limit L
// [--step K] | --check) [--allocator A] [--set K=V] [--bytes-limit L]
// [--device D] [--out FILE.pickle] [--json OUT]`: the job's memory at a size
// nobody ran (sim/scale/: align the recordings, fit each allocation's size,
// synthesize the recording at N, replay it through the one pipeline).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/scenario_flags.h"
#include "sim/layer.h"
#include "sim/scale/fit_limit.h"
#include "sim/scale/predicted_trace.h"
#include "sim/scale/scale_check.h"
#include "sim/scale/scale_predict.h"
#include "sim/scale/scale_report.h"
#include "sim/whatif/whatif_common.h"
#include "trace/binary/trace_sink.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

class ScaleCommand : public Command {
 public:
  void Configure(CLI::App& app) override;
  int Run() override;

 private:
  std::optional<CommandFailure> Scale();
  std::optional<CommandFailure> ParseInputs(std::vector<scale::MemberInput>& inputs, ScenarioRequest& request);
  std::optional<CommandFailure> Resolve(const scale::ScaleModel& model, AllocatorConfig& config,
                                 std::vector<std::string>& applied);
  std::optional<CommandFailure> Answer(const scale::ScaleModel& model, const AllocatorConfig& config,
                                scale::ScaleReport& report);

  std::vector<std::pair<std::string, std::string>> at_;
  std::string to_, fit_limit_, step_ = "1", allocator_, bytes_limit_, device_, out_, json_;
  std::string start_state_ = "seed";
  std::vector<std::string> sets_;
  bool check_ = false;
  bool snapshot_out_ = false;  // --out X.pickle|X.json: the predicted run as a PyTorch snapshot
  std::optional<uint64_t> to_value_;
  io::OutputSet outputs_;
  // What the report points at, kept until it is written.
  std::optional<scale::Prediction> prediction_;
  std::optional<scale::FitLimitResult> fit_limit_result_;
  std::optional<std::vector<scale::CheckRow>> check_rows_;
};

void ScaleCommand::Configure(CLI::App& app) {
  app.add_option(
         "--at", at_,
         "VALUE FILE: a recording of the job at one value of the size parameter (sequence length, batch, "
         "...); give two or more")
      ->required();
  app.add_option("--to", to_, "predict and replay the job at this value");
  app.add_option("--fit-limit", fit_limit_,
                 "search the largest value whose prediction fits this limit (units allowed)");
  app.add_option("--step", step_, "--fit-limit tries multiples of this value only (default 1)");
  app.add_flag("--check", check_, "predict each recording from the others and print the errors");
  app.add_option("--allocator", allocator_,
                 "a built-in policy or a YAML config (default: the allocator that wrote the recordings)");
  AddSetFlag(app, sets_, "KEY=VALUE: override one allocator option (repeatable)");
  app.add_option(
      "--bytes-limit", bytes_limit_,
      "the limit of --to's verdict (default: the one the largest recording states, else unlimited)");
  app.add_option("--device", device_, "the device of every recording (default: as replay chooses)");
  AddStartStateFlag(app, start_state_, "seed (default) or place, as replay takes it");
  app.add_option(
      "--out", out_,
      "write the prediction at --to: X.pickle or X.json, the snapshot of its replay (PyTorch's format); "
      "any other name, a trace (.hbt: binary)");
  app.add_option("--json", json_, "write the report as JSON here");
}

std::optional<CommandFailure> ScaleCommand::ParseInputs(std::vector<scale::MemberInput>& inputs,
                                                 ScenarioRequest& request) {
  std::vector<io::NamedPath> in;
  for (const auto& [value, path] : at_) {
    absl::StatusOr<uint64_t> v = ParseU64(value);
    if (!v.ok() || *v == 0) {
      return CommandFailure{kExitBadInput,
                     fmt::format("--at {} {}: the value must be a positive integer", value, path)};
    }
    inputs.push_back({*v, path});
    in.push_back({"--at", path});
  }
  if (to_.empty() && fit_limit_.empty() && !check_) {
    return CommandFailure{kExitBadInput, "give --to N, --fit-limit LIMIT or --check"};
  }
  if (!to_.empty()) {
    absl::StatusOr<uint64_t> to = ParseU64(to_);
    if (!to.ok() || *to == 0)
      return CommandFailure{kExitBadInput, fmt::format("--to {}: must be a positive integer", to_)};
    to_value_ = *to;
  }
  if (!out_.empty() && to_.empty())
    return CommandFailure{kExitBadInput, "--out: writes the prediction at --to; give --to"};
  snapshot_out_ = out_.ends_with(".pickle") || out_.ends_with(".json");
  absl::StatusOr<ScenarioRequest> r = ParseScenarioRequest(device_, start_state_);
  if (!r.ok()) return FailureFromStatus(r.status());
  request = *r;
  in.push_back({"--allocator", allocator_});
  // A snapshot --out is the viz outputs' memory-viz export of the predicted run.
  absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open(
      WithPartnerFiles(in),
      {{"--json", json_}, {"--memory-viz", snapshot_out_ ? out_ : ""}, {"--out", snapshot_out_ ? "" : out_}});
  if (!outputs.ok()) return FailureFromStatus(outputs.status());
  outputs_ = *std::move(outputs);
  return std::nullopt;
}

std::optional<CommandFailure> ScaleCommand::Resolve(const scale::ScaleModel& model, AllocatorConfig& config,
                                             std::vector<std::string>& applied) {
  const Scenario& scenario = *model.templ().scenario;
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, scenario, chosen);
  if (!allocator.ok()) return FailureFromStatus(allocator.status());
  if (!chosen.empty()) Note("hbmsim scale: " + chosen);
  absl::StatusOr<AllocatorConfig> c = ResolveWithSets(*allocator, sets_, scenario, &applied);
  if (!c.ok()) return FailureFromStatus(c.status());
  config = *std::move(c);
  return std::nullopt;
}

std::optional<CommandFailure> ScaleCommand::Answer(const scale::ScaleModel& model, const AllocatorConfig& config,
                                            scale::ScaleReport& report) {
  if (to_value_) {
    viz::VizOutputs viz(viz::VizFlags{"", "", snapshot_out_ ? out_ : "", "simulated"});
    scale::ScaleRunOptions options{false, true, snapshot_out_ ? &viz : nullptr, &outputs_};
    absl::StatusOr<scale::Prediction> p = scale::PredictAt(model, config, bytes_limit_, *to_value_, options);
    if (!p.ok()) return FailureFromStatus(p.status());
    prediction_ = *std::move(p);
    report.prediction = &*prediction_;
    report.out = out_;
    report.out_is_snapshot = snapshot_out_;
    if (io::OutputFile* trace = outputs_.Get("--out")) {
      absl::Status s = scale::WritePredictedTrace(prediction_->predicted.scenario, trace->stream(),
                                                  TraceFormatForPath(out_));
      if (!s.ok()) return FailureFromStatus(io::WithRole("--out", trace->status().ok() ? s : trace->status()));
    }
  }
  if (!fit_limit_.empty()) {
    absl::StatusOr<Bytes> limit = ParseBytes(fit_limit_, /*allow_more_units=*/true);
    if (!limit.ok()) {
      return CommandFailure{kExitBadInput,
                     fmt::format("--fit-limit {}: {}", fit_limit_, std::string(limit.status().message()))};
    }
    absl::StatusOr<uint64_t> step = ParseU64(step_);
    if (!step.ok() || *step == 0)
      return CommandFailure{kExitBadInput, fmt::format("--step {}: must be a positive integer", step_)};
    absl::StatusOr<scale::FitLimitResult> f = scale::FitLimit(model, config, *limit, *step);
    if (!f.ok()) return FailureFromStatus(f.status());
    fit_limit_result_ = *std::move(f);
    report.fit_limit = &*fit_limit_result_;
  }
  if (check_) {
    absl::StatusOr<std::vector<scale::CheckRow>> rows = scale::CheckLeaveOneOut(model, config, bytes_limit_);
    if (!rows.ok()) return FailureFromStatus(rows.status());
    check_rows_ = *std::move(rows);
    report.check = &*check_rows_;
  }
  return std::nullopt;
}

std::optional<CommandFailure> ScaleCommand::Scale() {
  std::vector<scale::MemberInput> inputs;
  ScenarioRequest request;
  if (auto f = ParseInputs(inputs, request)) return f;
  absl::StatusOr<std::vector<std::shared_ptr<const scale::MemberStream>>> members =
      scale::OpenMembers(inputs, request);
  if (!members.ok()) return FailureFromStatus(members.status());
  absl::StatusOr<scale::ScaleModel> model = scale::BuildScaleModel(*std::move(members), to_value_);
  if (!model.ok()) return FailureFromStatus(model.status());
  AllocatorConfig config;
  scale::ScaleReport report{&*model, &config, {}, nullptr, nullptr, nullptr, ""};
  if (auto f = Resolve(*model, config, report.applied_settings)) return f;
  if (auto f = Answer(*model, config, report)) return f;
  if (absl::Status s = io::WriteStdout(scale::ScaleText(report)); !s.ok()) return FailureFromStatus(s);
  if (!json_.empty()) {
    if (absl::Status s = outputs_.Write("--json", JsonText(scale::ScaleJson(report), 2) + "\n"); !s.ok()) {
      return FailureFromStatus(s);
    }
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return FailureFromStatus(s);
  // Exit 1, as replay's and size's: the prediction fails, or no value fits the limit.
  const bool failed =
      (prediction_ && !prediction_->run.fits()) || (fit_limit_result_ && !fit_limit_result_->largest_fitting);
  return failed ? std::optional<CommandFailure>(CommandFailure{kExitFailures, ""}) : std::nullopt;
}

int ScaleCommand::Run() {
  std::optional<CommandFailure> f = Scale();
  FlushNotes(f ? f->code : kExitOk);
  if (!f) return kExitOk;
  if (!f->message.empty()) PrintError(fmt::format("hbmsim scale: {}", OneLineMessage(f->message)));
  return f->code;
}

const CommandRegistration kScale(
    "scale", "predict a job's memory at a size nobody ran, from recordings at a few sizes",
    []() -> std::unique_ptr<Command> { return std::make_unique<ScaleCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
