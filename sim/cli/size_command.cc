// `hbmsim size TRACE --allocator A [--set K=V] [--device N] [--start-state
// seed|place] [--resolution 256] [--jobs N] [--json OUT]`: the smallest
// bytes_limit at which the trace replays with no failed allocation
// (sim/whatif/size_search.h says how it is searched). Every trial is the
// replay `hbmsim replay` runs on the same scenario (device, start state,
// recorded settings), so `replay` at the answer fits.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/cli/command.h"
#include "sim/cli/scenario_flags.h"
#include "sim/cli/size_progress.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/fresh_start.h"
#include "sim/whatif/size_search.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/human_bytes.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

class SizeCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("TRACE", trace_, "the trace (any format replay reads)")->required();
    app.add_option("--allocator", allocator_,
                   "a built-in policy or a YAML config (default: the allocator that wrote the recording: torch for "
                   "a PyTorch snapshot, bfc for a TF/JAX profile)");
    AddSetFlag(app, sets_, "KEY=VALUE: override one allocator option (repeatable)");
    AddDeviceFlag(app, device_, "size this device");
    AddStartStateFlag(app, start_state_,
                      "a recording that starts mid-run: seed (default) installs its segments as recorded, so a "
                      "limit below their reserved bytes fails; place allocates its live blocks through the policy");
    app.add_option("--resolution", resolution_, "the search's step in bytes (default 256; units allowed)");
    AddJobsFlag(app, jobs_, "trials");
    app.add_option("--json", json_, "write min_bytes_limit, peak_live_bytes, overhead, ... here");
  }
  int Run() override;

 private:
  std::optional<CommandFailure> Size();
  std::optional<CommandFailure> ParseFlags(Bytes& resolution, ScenarioRequest& request) const;
  std::optional<CommandFailure> SizeFreshStart(const Scenario& scenario, const AllocatorConfig& config,
                                               const SizeOptions& options);
  void NoteHowTrialsRan(const SizedScenario& sized, const AllocatorConfig& config) const;
  std::optional<CommandFailure> WriteAnswer(const SizedScenario& sized, const AllocatorConfig& config,
                                            Bytes resolution);
  std::string Text(const TrialTarget& target, const SizeResult& r) const;
  nlohmann::ordered_json Json(const AllocatorConfig& config, const SizeResult& r, uint64_t resolution) const;
  std::string FreshStartText(const SizeResult& as_recorded) const;

  std::string trace_;
  std::string allocator_;
  std::vector<std::string> sets_;
  std::string device_;
  std::string start_state_ = "seed";
  std::vector<std::string> applied_;  // settings taken from the recording
  std::optional<DeviceId> device_used_;
  std::string resolution_ = "256";
  int jobs_ = DefaultJobs();
  std::string json_;
  io::OutputSet outputs_;  // --json, created before the search, renamed into place after it
  // A recording that began warm, sized in seed mode: the answer from a fresh start too.
  std::optional<SizeResult> fresh_start_;
};

std::string Human(Bytes b) { return HumanReadableNumBytes(b); }

std::string SizeCommand::Text(const TrialTarget& target, const SizeResult& r) const {
  const AllocatorConfig& config = target.config;
  const Scenario& scenario = *target.scenario;
  std::string out = "hbmsim size\n";
  out += fmt::format("  trace:            {}\n", trace_);
  out += fmt::format("  allocator:        {} ({})\n", config.policy->name, config.source);
  out += fmt::format("  options:          {}\n", EffectiveOptionsText(config));
  if (!applied_.empty()) out += fmt::format("  settings:         {} (from the recording)\n", fmt::join(applied_, " "));
  out += fmt::format("  device:           {}\n", DeviceLine(scenario, target.survey));
  if (scenario.start_summary && scenario.start_summary->segments > 0) {
    out += fmt::format("  start state:      {} segments, {} B reserved, {} live blocks ({}: {})\n",
                       scenario.start_summary->segments, scenario.start_summary->reserved.value(),
                       scenario.start_summary->live_blocks, StartStateModeName(scenario.start_mode),
                       scenario.start_mode == StartStateMode::kSeed && config.policy->recording.seed
                           ? "installed as recorded; a limit below its reserved bytes fails"
                           : "its live blocks allocated through the policy");
  }
  out += fmt::format("  peak live bytes:  {} ({})\n", r.peak_live_bytes.value(), Human(r.peak_live_bytes));
  out += fmt::format("  resolution:       {}\n", resolution_);
  out += fmt::format("  trials:           {} limits tried\n", r.probes.size());
  if (!r.found) {
    out += "  min bytes_limit:  none: no limit up to 4EiB fits\n";
    return out + FreshStartText(r);
  }
  out += fmt::format("  min bytes_limit:  {} ({})\n", r.min_bytes_limit.value(), Human(r.min_bytes_limit));
  out += fmt::format("  overhead:         {:.4f} ({:.2f}% over peak live)\n", r.overhead, 100 * r.overhead);
  out += fmt::format("  at the answer:    {} fits all {} events (its trial run to the last one)\n",
                     r.min_bytes_limit.value(), r.at_answer.summary.events_replayed);
  if (r.non_monotonic) {
    out += fmt::format(
        "  WARNING: not monotonic: {} fits but the larger limit {} failed; {} allocator is not monotonic in "
        "its "
        "limit, so a limit above the minimum may still fail\n",
        r.min_bytes_limit.value(), r.non_monotonic->value(), config.policy->name);
  } else {
    out += "  monotonic:        no larger limit that was tried failed\n";
  }
  return out + FreshStartText(r);
}

// Both answers of a recording that began warm, each with what it applies to.
std::string SizeCommand::FreshStartText(const SizeResult& as_recorded) const {
  if (!fresh_start_) return "";
  const auto min = [](const SizeResult& r) {
    return r.found ? fmt::format("{} ({})", r.min_bytes_limit.value(), Human(r.min_bytes_limit))
                   : std::string("none");
  };
  std::string out = "\nThe recording began with memory already reserved, so there are two answers:\n";
  out += fmt::format("  as recorded:        {}  ({})\n", min(as_recorded), kAsRecordedMeans);
  out += fmt::format("  from a fresh start: {}  ({})\n", min(*fresh_start_), kFreshStartMeans);
  return out;
}

nlohmann::ordered_json SizeCommand::Json(const AllocatorConfig& config, const SizeResult& r,
                                         uint64_t resolution) const {
  nlohmann::ordered_json j;
  j["trace"] = trace_;
  j["allocator"] = AllocatorJson(config);
  j["device"] = device_used_ ? nlohmann::ordered_json(device_used_->value()) : nlohmann::ordered_json();
  j["min_bytes_limit"] =
      r.found ? nlohmann::ordered_json(r.min_bytes_limit.value()) : nlohmann::ordered_json();
  j["peak_live_bytes"] = r.peak_live_bytes.value();
  j["overhead"] = r.found ? nlohmann::ordered_json(r.overhead) : nlohmann::ordered_json();
  j["resolution"] = resolution;
  j["non_monotonic"] =
      r.non_monotonic ? nlohmann::ordered_json(r.non_monotonic->value()) : nlohmann::ordered_json();
  nlohmann::ordered_json probes = nlohmann::ordered_json::array();
  for (const SizeProbe& p : r.probes) probes.push_back({{"bytes_limit", p.limit.value()}, {"fits", p.ok}});
  j["trials"] = probes;
  j["start_state"] = start_state_;
  // A recording that began warm: the minimum of a new run (--start-state place) beside this one.
  j["fresh_start"] = nlohmann::ordered_json();
  if (fresh_start_) {
    const SizeResult& f = *fresh_start_;
    j["fresh_start"] = {
        {"min_bytes_limit",
         f.found ? nlohmann::ordered_json(f.min_bytes_limit.value()) : nlohmann::ordered_json()},
        {"overhead", f.found ? nlohmann::ordered_json(f.overhead) : nlohmann::ordered_json()}};
  }
  return j;
}

std::optional<CommandFailure> SizeCommand::ParseFlags(Bytes& resolution, ScenarioRequest& request) const {
  absl::StatusOr<Bytes> parsed_resolution = ParseBytes(resolution_, /*allow_more_units=*/true);
  if (!parsed_resolution.ok()) {
    return CommandFailure{kExitBadInput, fmt::format("--resolution {}: {}", resolution_,
                                                     std::string(parsed_resolution.status().message()))};
  }
  if (parsed_resolution->is_zero()) return CommandFailure{kExitBadInput, "--resolution 0: must be at least 1 byte"};
  resolution = *parsed_resolution;
  if (jobs_ < 1) return CommandFailure{kExitBadInput, fmt::format("--jobs {}: must be at least 1", jobs_)};
  absl::StatusOr<ScenarioRequest> parsed = ParseScenarioRequest(device_, start_state_);
  if (!parsed.ok()) return CommandFailure{kExitBadInput, std::string(parsed.status().message())};
  request = *parsed;
  return std::nullopt;
}

std::optional<CommandFailure> SizeCommand::Size() {
  Bytes resolution;
  ScenarioRequest request;
  if (auto f = ParseFlags(resolution, request)) return f;
  absl::StatusOr<io::OutputSet> outputs = io::OutputSet::Open(
      WithPartnerFiles({{"TRACE", trace_}, {"--allocator", allocator_}}), {{"--json", json_}});
  if (!outputs.ok()) return CommandFailure{kExitBadInput, std::string(outputs.status().message())};
  outputs_ = *std::move(outputs);
  absl::StatusOr<Scenario> scenario = OpenScenario(trace_, request);
  if (!scenario.ok()) return CommandFailure{kExitBadInput, std::string(scenario.status().message())};
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, *scenario, chosen);
  if (!allocator.ok()) return CommandFailure{kExitBadInput, std::string(allocator.status().message())};
  if (!chosen.empty()) Note("hbmsim size: " + chosen);
  allocator_ = *allocator;
  absl::StatusOr<AllocatorConfig> config = ResolveWithSets(allocator_, sets_, *scenario, &applied_);
  if (!config.ok()) return CommandFailure{kExitBadInput, std::string(config.status().message())};
  SizeProgressLine progress(stderr, viz::Progress::IsTerminal(stderr), "hbmsim size");
  SizeOptions options{resolution.value(), jobs_};
  options.survey_observer = progress.survey_observer();
  options.on_progress = progress.Callback();
  absl::StatusOr<SizedScenario> sized = SizeScenario(*scenario, *config, options);
  progress.Finish();
  if (!sized.ok()) {
    const bool internal = sized.status().code() == absl::StatusCode::kInternal;
    return CommandFailure{
        internal ? kExitInternal : kExitBadInput,
        fmt::format("{}{}", internal ? "internal error: " : "", std::string(sized.status().message()))};
  }
  if (BeganWarm(*scenario, *config)) {  // the answer for a new run of the job, too
    if (auto f = SizeFreshStart(*scenario, *config, options)) return f;
  }
  device_used_ = sized->target.survey.device;
  NoteHowTrialsRan(*sized, *config);
  return WriteAnswer(*sized, *config, resolution);
}

std::optional<CommandFailure> SizeCommand::SizeFreshStart(const Scenario& scenario, const AllocatorConfig& config,
                                                          const SizeOptions& options) {
  absl::StatusOr<SizedScenario> fresh = SizeScenario(FreshStartOf(scenario), config, options);
  if (!fresh.ok()) {
    const bool internal = fresh.status().code() == absl::StatusCode::kInternal;
    return CommandFailure{internal ? kExitInternal : kExitBadInput, std::string(fresh.status().message())};
  }
  fresh_start_ = fresh->result;
  return std::nullopt;
}

// How the trials ran (which ones resumed depends on timing, so not how many).
void SizeCommand::NoteHowTrialsRan(const SizedScenario& sized, const AllocatorConfig& config) const {
  const ScenarioSurvey& survey = sized.target.survey;
  const SizeResult& r = sized.result;
  const char* how = r.trials_resume   ? "trials resume from checkpoints of earlier ones"
                    : r.trials_shared ? "every trial replays the events from memory"
                                      : "every trial replays the recording afresh";
  Note(fmt::format("hbmsim size: {}: {} events of device {}, peak live {} B; {}{}", trace_, survey.events_replayed,
                   survey.device ? fmt::format("{}", survey.device->value()) : "-",
                   survey.peak_live_bytes.value(), how,
                   config.policy->plan ? " (offline plans from one more pass first)" : ""));
}

// The text, --json, every output renamed into place; exit 1 when no limit fits.
std::optional<CommandFailure> SizeCommand::WriteAnswer(const SizedScenario& sized, const AllocatorConfig& config,
                                                       Bytes resolution) {
  const SizeResult& r = sized.result;
  const std::string text = Text(sized.target, r);
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return CommandFailure{kExitBadInput, std::string(s.message())};
  if (!json_.empty()) {
    const std::string json = JsonText(Json(config, r, resolution.value()), 2) + "\n";
    if (absl::Status s = outputs_.Write("--json", json); !s.ok()) {
      return CommandFailure{kExitBadInput, std::string(s.message())};
    }
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return CommandFailure{kExitBadInput, std::string(s.message())};
  if (!r.found) return CommandFailure{kExitFailures, "no limit up to 4EiB fits this trace"};
  return std::nullopt;
}

int SizeCommand::Run() {
  std::optional<CommandFailure> f = Size();
  FlushNotes(f ? f->code : kExitOk);
  if (!f) return kExitOk;
  PrintError(fmt::format("hbmsim size: {}", OneLineMessage(f->message)));
  return f->code;
}

const CommandRegistration kSize(
    "size", "the smallest bytes_limit at which a trace replays with no failure, under one allocator",
    []() -> std::unique_ptr<Command> { return std::make_unique<SizeCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
