// `hbmsim compare TRACE [--allocators bfc,tpu,first_fit,...] [--bytes-limit L|auto]
// [--device N] [--start-state seed|place]`: one row per allocator
// (sim/whatif/comparison.h lists the measures), each the replay `hbmsim
// replay` runs on the same scenario.
// `hbmsim compare --baseline A --candidate B [--allocator X] [--bytes-limit L]`:
// the side-by-side table a performance PR needs, each line with its delta;
// the peaks of the two replays, reserved at each peak explained part by part
// and the first events where the two recordings diverge
// (sim/whatif/recording_diff.h).
// Two held states (JAX device memory profiles) need no allocator: what grew,
// per device by kind and frame (sim/inspect/held_diff.h).
// L is --bytes-limit, else the limit the job ran under where the recording
// states it (its OOM's capacity, its stated limit, `# device_bytes:`), as
// `advise` and `replay` take it. Either form exits 1 when a configuration
// fails at L, as `replay` does.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/scenario_flags.h"
#include "sim/cli/size_progress.h"
#include "sim/config/policy_registry.h"
#include "sim/inspect/held_diff.h"
#include "sim/layer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"
#include "sim/whatif/comparison.h"
#include "sim/whatif/group_delta.h"
#include "sim/whatif/recording_diff.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

class CompareCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("TRACE", trace_, "the trace to compare allocators on");
    app.add_option("--allocators", allocators_,
                   "comma-separated NAME[:KEY=VALUE...] or YAML configs, e.g. bfc,tpu,paged:page_size=64KiB "
                   "(default: the runtimes' allocators, bfc, cuda_async, torch and tpu, the recording's own first)");
    app.add_option("--baseline", baseline_, "baseline recording (with --candidate)");
    app.add_option("--candidate", candidate_, "candidate trace, compared with --baseline");
    app.add_option("--allocator", allocator_,
                   "the allocator for --baseline/--candidate (default: the one that wrote the baseline: torch "
                   "for a PyTorch snapshot, bfc for a TF/JAX profile)");
    AddSetFlag(app, sets_, "KEY=VALUE for --allocator (repeatable)");
    app.add_option("--bytes-limit", bytes_limit_,
                   "the limit L for failures and peaks (units allowed; auto: the capacity a recorded OOM implies; "
                   "default: the limit the recording states, else none)");
    AddDeviceFlag(app, device_, "compare on this device");
    AddStartStateFlag(app, start_state_,
                      "a recording that starts mid-run: seed (default) installs its segments as recorded; place "
                      "allocates its live blocks through each policy");
    app.add_option("--resolution", resolution_, "the size search's step in bytes (default 256)");
    AddJobsFlag(app, jobs_, "trials");
    app.add_option("--json", json_, "write the table as JSON here");
  }
  int Run() override {
    std::optional<CommandFailure> f = Compare();
    FlushNotes(f ? f->code : kExitOk);
    if (!f) return kExitOk;
    if (!f->message.empty()) PrintError(fmt::format("hbmsim compare: {}", OneLineMessage(f->message)));
    return f->code;
  }

 private:
  std::optional<CommandFailure> Compare();
  std::optional<CommandFailure> ParseCommon(SizeOptions& options, ScenarioRequest& request) const;
  // The limit L for `scenario`: --bytes-limit (a size, or auto), else the
  // one the job ran under as the recording states it (advise's), else none.
  absl::StatusOr<std::optional<LimitChoice>> Limit(const Scenario& scenario) const;
  absl::StatusOr<Scenario> Load(const std::string& path, const ScenarioRequest& request,
                                ScenarioSurvey& survey);
  absl::StatusOr<Scenario> Load(std::shared_ptr<const Recording> recording, const ScenarioRequest& request,
                                ScenarioSurvey& survey);
  std::optional<CommandFailure> HeldPair(std::shared_ptr<const Recording> a, std::shared_ptr<const Recording> b,
                                  const ScenarioRequest& request);
  std::optional<CommandFailure> OpenOutputs();
  std::optional<CommandFailure> Emit(const std::string& text, const nlohmann::ordered_json& json);
  std::optional<CommandFailure> Multi(const SizeOptions& options, const ScenarioRequest& request);
  std::optional<CommandFailure> Pair(const SizeOptions& options, const ScenarioRequest& request);
  // Two recordings with events: each replayed, sized and told apart.
  std::optional<CommandFailure> ReplayedPair(std::shared_ptr<const Recording> a_recording,
                                             std::shared_ptr<const Recording> b_recording,
                                             const SizeOptions& options, const ScenarioRequest& request);

  std::string trace_, allocators_, baseline_, candidate_, allocator_;
  std::vector<std::string> sets_;
  std::string bytes_limit_;
  std::string device_;
  std::string start_state_ = "seed";
  std::string resolution_ = "256";
  int jobs_ = DefaultJobs();
  std::string json_;
  io::OutputSet outputs_;  // --json, created before the trials, renamed into place after them
  // On a terminal: the surveys' events and each configuration's search.
  SizeProgressLine progress_{stderr, viz::Progress::IsTerminal(stderr), "hbmsim compare"};
};

std::optional<CommandFailure> CompareCommand::ParseCommon(SizeOptions& options, ScenarioRequest& request) const {
  absl::StatusOr<Bytes> r = ParseBytes(resolution_, /*allow_more_units=*/true);
  if (!r.ok()) {
    return CommandFailure{kExitBadInput,
                   fmt::format("--resolution {}: {}", resolution_, std::string(r.status().message()))};
  }
  if (r->is_zero()) return CommandFailure{kExitBadInput, "--resolution 0: must be at least 1 byte"};
  if (jobs_ < 1) return CommandFailure{kExitBadInput, fmt::format("--jobs {}: must be at least 1", jobs_)};
  options = SizeOptions{r->value(), jobs_};
  absl::StatusOr<ScenarioRequest> parsed = ParseScenarioRequest(device_, start_state_);
  if (!parsed.ok()) return CommandFailure{kExitBadInput, std::string(parsed.status().message())};
  request = *parsed;
  return std::nullopt;
}

absl::StatusOr<std::optional<LimitChoice>> CompareCommand::Limit(const Scenario& scenario) const {
  return bytes_limit_.empty() ? RecordedLimitChoice(scenario) : LimitFromFlag(scenario, bytes_limit_);
}

absl::StatusOr<Scenario> CompareCommand::Load(const std::string& path, const ScenarioRequest& request,
                                              ScenarioSurvey& survey) {
  absl::StatusOr<std::unique_ptr<Recording>> recording = OpenRecording(path);
  if (!recording.ok()) return recording.status();
  return Load(std::shared_ptr<const Recording>(*std::move(recording)), request, survey);
}

absl::StatusOr<Scenario> CompareCommand::Load(std::shared_ptr<const Recording> recording,
                                              const ScenarioRequest& request, ScenarioSurvey& survey) {
  absl::StatusOr<Scenario> scenario = MakeScenario(std::move(recording), request);
  if (!scenario.ok()) return scenario.status();
  absl::StatusOr<ScenarioSurvey> s =
      SurveyScenario(*scenario, SurveyOptions{.observer = progress_.survey_observer()});
  if (!s.ok()) return s.status();
  survey = *s;
  return scenario;
}

// One stderr line per recording, once the arguments are known to be good.
// (How the trials read it differs by row: docs/what-if.md "Cost".)
void Announce(const std::string& path, const ScenarioSurvey& survey) {
  Note(fmt::format("hbmsim compare: {}: {} events of device {}, peak live {} B",
                   path, survey.events_replayed, survey.device ? fmt::format("{}", survey.device->value()) : "-",
                   survey.peak_live_bytes.value()));
}

// Every file the command reads (traces, YAML configs named by --allocator(s))
// is an input the --json output must not be; it is created before any trial.
std::optional<CommandFailure> CompareCommand::OpenOutputs() {
  std::vector<io::NamedPath> inputs = {
      {"TRACE", trace_}, {"--baseline", baseline_}, {"--candidate", candidate_}, {"--allocator", allocator_}};
  for (size_t at = 0; at < allocators_.size();) {
    const size_t comma = std::min(allocators_.find(',', at), allocators_.size());
    const std::string item = allocators_.substr(at, comma - at);
    inputs.push_back({"--allocators", item.substr(0, item.find(':'))});
    at = comma + 1;
  }
  absl::StatusOr<io::OutputSet> opened = io::OutputSet::Open(WithPartnerFiles(inputs), {{"--json", json_}});
  if (!opened.ok()) return CommandFailure{kExitBadInput, std::string(opened.status().message())};
  outputs_ = *std::move(opened);
  return std::nullopt;
}

std::optional<CommandFailure> CompareCommand::Emit(const std::string& text, const nlohmann::ordered_json& json) {
  progress_.Finish();
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return CommandFailure{kExitBadInput, std::string(s.message())};
  if (!json_.empty()) {
    // A profile's frame names can hold bytes that are not UTF-8: replaced, never an internal error.
    const std::string text = JsonText(json, 2) + "\n";
    if (absl::Status s = outputs_.Write("--json", text); !s.ok()) {
      return CommandFailure{kExitBadInput, std::string(s.message())};
    }
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return CommandFailure{kExitBadInput, std::string(s.message())};
  return std::nullopt;
}

std::optional<CommandFailure> CompareCommand::Multi(const SizeOptions& options, const ScenarioRequest& request) {
  ScenarioSurvey survey;
  absl::StatusOr<Scenario> scenario = Load(trace_, request, survey);
  if (!scenario.ok()) return FailureFromStatus(scenario.status());
  absl::StatusOr<std::optional<LimitChoice>> limit = Limit(*scenario);
  if (!limit.ok()) return FailureFromStatus(limit.status());
  const std::optional<Bytes> at = *limit ? std::optional<Bytes>((*limit)->limit) : std::nullopt;
  std::string chosen;
  const std::string allocators = allocators_.empty() ? RuntimeAllocators(*scenario, chosen) : allocators_;
  absl::StatusOr<std::vector<AllocatorConfig>> configs = ParseAllocatorList(allocators, *scenario);
  if (!configs.ok()) return CommandFailure{kExitBadInput, std::string(configs.status().message())};
  if (!chosen.empty()) Note("hbmsim compare: " + chosen);
  Announce(trace_, survey);
  for (const AllocatorConfig& c : *configs) {
    if (c.policy->plan) {
      Note(fmt::format("hbmsim compare: {} plans from one more pass over the trace, then replays", c.policy->name));
    }
  }
  absl::StatusOr<std::vector<CompareRow>> rows = CompareAllocators(*scenario, survey, *configs, at, options);
  if (!rows.ok()) return FailureFromStatus(rows.status());
  if (auto f = Emit(CompareText(*scenario, survey, *limit, *rows), CompareJson(*scenario, survey, *limit, *rows)))
    return f;
  // As `replay` does: a policy that fails at the given limit is the answer a script checks.
  if (AnyRowFails(*rows)) return CommandFailure{kExitFailures, ""};
  return std::nullopt;
}

// Two held states: what grew, by device, kind and frame; no allocator runs.
std::optional<CommandFailure> CompareCommand::HeldPair(std::shared_ptr<const Recording> a,
                                                std::shared_ptr<const Recording> b,
                                                const ScenarioRequest& request) {
  inspect::HeldOptions options;
  options.device = request.device;
  options.device_name = request.device_name;
  absl::StatusOr<inspect::HeldReport> ha = inspect::MakeHeldReport(std::move(a), options);
  if (!ha.ok()) return FailureFromStatus(ha.status());
  absl::StatusOr<inspect::HeldReport> hb = inspect::MakeHeldReport(std::move(b), options);
  if (!hb.ok()) return FailureFromStatus(hb.status());
  const inspect::HeldDiff diff = inspect::DiffHeld(*ha, *hb);
  return Emit(inspect::RenderHeldDiffText(diff), inspect::RenderHeldDiffJson(diff));
}

std::optional<CommandFailure> CompareCommand::Pair(const SizeOptions& options, const ScenarioRequest& request) {
  if (baseline_.empty() || candidate_.empty()) {
    return CommandFailure{kExitBadInput, "--baseline and --candidate go together"};
  }
  absl::StatusOr<std::unique_ptr<Recording>> opened_a = OpenRecording(baseline_);
  if (!opened_a.ok()) return FailureFromStatus(opened_a.status());
  absl::StatusOr<std::unique_ptr<Recording>> opened_b = OpenRecording(candidate_);
  if (!opened_b.ok()) return FailureFromStatus(opened_b.status());
  std::shared_ptr<const Recording> ra_recording(*std::move(opened_a)), rb_recording(*std::move(opened_b));
  if (ra_recording->facts().held_state != nullptr && rb_recording->facts().held_state != nullptr) {
    if (!allocator_.empty()) {
      return CommandFailure{kExitBadInput, "--allocator: two device memory profiles are compared by what they hold, "
                                    "with no allocator"};
    }
    return HeldPair(std::move(ra_recording), std::move(rb_recording), request);
  }
  return ReplayedPair(std::move(ra_recording), std::move(rb_recording), options, request);
}

std::optional<CommandFailure> CompareCommand::ReplayedPair(std::shared_ptr<const Recording> a_recording,
                                                           std::shared_ptr<const Recording> b_recording,
                                                           const SizeOptions& options,
                                                           const ScenarioRequest& request) {
  ScenarioSurvey sa, sb;
  absl::StatusOr<Scenario> a = Load(std::move(a_recording), request, sa);
  if (!a.ok()) return FailureFromStatus(a.status());
  absl::StatusOr<Scenario> b = Load(std::move(b_recording), request, sb);
  if (!b.ok()) return FailureFromStatus(b.status());
  // Without --allocator, the one that ran the baseline's job (a snapshot's
  // torch, a profile's bfc), for both: the same job, the same allocator.
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, *a, chosen);
  if (!allocator.ok()) return CommandFailure{kExitBadInput, std::string(allocator.status().message())};
  if (!chosen.empty()) Note("hbmsim compare: --baseline: " + chosen);
  allocator_ = *allocator;
  absl::StatusOr<std::optional<LimitChoice>> limit = Limit(*a);
  if (!limit.ok()) return FailureFromStatus(limit.status());
  const std::optional<Bytes> at = *limit ? std::optional<Bytes>((*limit)->limit) : std::nullopt;
  absl::StatusOr<AllocatorConfig> ca = ResolveWithSets(allocator_, sets_, *a);
  if (!ca.ok()) return CommandFailure{kExitBadInput, std::string(ca.status().message())};
  absl::StatusOr<AllocatorConfig> cb = ResolveWithSets(allocator_, sets_, *b);
  if (!cb.ok()) return CommandFailure{kExitBadInput, std::string(cb.status().message())};
  Announce(baseline_, sa);
  Announce(candidate_, sb);
  absl::StatusOr<std::vector<CompareRow>> ra = CompareAllocators(*a, sa, {*ca}, at, options);
  if (!ra.ok()) return FailureFromStatus(ra.status());
  absl::StatusOr<std::vector<CompareRow>> rb = CompareAllocators(*b, sb, {*cb}, at, options);
  if (!rb.ok()) return FailureFromStatus(rb.status());
  absl::StatusOr<MemoryBreakdown> ga = PeakLiveBreakdown(*a);
  if (!ga.ok()) return FailureFromStatus(ga.status());
  absl::StatusOr<MemoryBreakdown> gb = PeakLiveBreakdown(*b);
  if (!gb.ok()) return FailureFromStatus(gb.status());
  absl::StatusOr<RecordingPeaks> pa = ReplayPeaks(*a, *ca, at.value_or(Bytes::Max()));
  if (!pa.ok()) return FailureFromStatus(pa.status());
  absl::StatusOr<RecordingPeaks> pb = ReplayPeaks(*b, *cb, at.value_or(Bytes::Max()));
  if (!pb.ok()) return FailureFromStatus(pb.status());
  absl::StatusOr<DivergenceList> diverge = FirstDivergences(*a, *b);
  if (!diverge.ok()) return FailureFromStatus(diverge.status());
  nlohmann::ordered_json json = BaselineCandidateJson(sa, sb, *limit, ra->front(), rb->front());
  json["memory_at_peak"] = GroupDeltaJson(*ga, *gb);
  json.update(RecordingDiffJson(*pa, *pb, *diverge));
  if (auto f = Emit(BaselineCandidateText(baseline_, candidate_, sa, sb, *limit, ra->front(), rb->front()) +
                        RecordingDiffText(*pa, *pb, *diverge) + GroupDeltaText(*ga, *gb),
                    json))
    return f;
  if (AnyRowFails(*ra) || AnyRowFails(*rb)) return CommandFailure{kExitFailures, ""};
  return std::nullopt;
}

std::optional<CommandFailure> CompareCommand::Compare() {
  SizeOptions options;
  ScenarioRequest request;
  if (auto f = ParseCommon(options, request)) return f;
  const bool pair = !baseline_.empty() || !candidate_.empty();
  if (pair && !trace_.empty())
    return CommandFailure{kExitBadInput, "give either TRACE or --baseline/--candidate, not both"};
  if (!pair && trace_.empty())
    return CommandFailure{kExitBadInput, "give TRACE [--allocators ...], or --baseline/--candidate"};
  if (auto f = OpenOutputs()) return f;
  options.on_progress = progress_.Callback();
  std::optional<CommandFailure> f = pair ? Pair(options, request) : Multi(options, request);
  progress_.Finish();  // before any error is printed
  return f;
}

const CommandRegistration kCompare(
    "compare",
    "compare allocators on one trace (min limit, failures, fragmentation), or a baseline and a candidate",
    []() -> std::unique_ptr<Command> { return std::make_unique<CompareCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
