// `hbmsim replay TRACE --allocator NAME|FILE.yaml ...`: replays a trace
// through one allocator and reports where and why allocations failed
// (docs/cli.md gives the flags, the CSV and the JSON keys).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/scenario_flags.h"
#include "sim/cli/replay_advice.h"
#include "sim/cli/replay_state_answers.h"
#include "sim/cli/size_progress.h"
#include "sim/config/allocator_config.h"
#include "sim/config/device_presets.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "sim/report/failure_spill.h"
#include "sim/report/memory_attribution.h"
#include "sim/report/placements_writer.h"
#include "sim/report/replay_recorder.h"
#include "sim/report/replay_report.h"
#include "sim/report/user_frames.h"
#include "sim/report/verdict.h"
#include "sim/scenario/peak_walk.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"
#include "sim/scenario/scenario_report.h"
#include "sim/scenario/scenario_run.h"
#include "sim/viz/viz_outputs.h"
#include "sim/whatif/advice.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/trial.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::sim::cli {
namespace {

// "Where the memory went" lists this many of the largest live buffers.
constexpr size_t kLargestBuffersListed = 10;

struct ReplayWatchers;

class ReplayCommand : public Command {
 public:
  void Configure(CLI::App& app) override;
  int Run() override;

 private:
  // Each step returns a CommandFailure or fills its output.
  std::optional<CommandFailure> ParseOptions(ReplayOptions& options, ScenarioRequest& request) const;
  std::optional<CommandFailure> LoadConfig(const Scenario& scenario, AllocatorConfig& config,
                                           std::vector<std::string>& applied) const;
  std::optional<CommandFailure> Answer(ReplayReportInput& report);
  StateQuestion StateQuestionFor(const ScenarioRequest& request);
  std::optional<CommandFailure> Replay(std::shared_ptr<const Recording> recording,
                                       const ScenarioRequest& request, viz::VizOutputs& viz,
                                       ReplayReportInput& report);
  std::optional<CommandFailure> ChooseConfig(const Scenario& scenario, AllocatorConfig& config,
                                             std::vector<std::string>& applied);
  std::optional<CommandFailure> ChooseLimit(const Scenario& scenario, const AllocatorConfig& config,
                                            ReplayReportInput& report) const;
  std::optional<CommandFailure> Watch(ScenarioRun& run, ReplayWatchers& watchers);
  void FillReport(const ScenarioRun& run, const AllocatorConfig& config, const ReplaySummary& summary,
                  const ReplayWatchers& watchers, ReplayReportInput& report) const;
  void AddTrials(const Scenario& scenario, const AllocatorConfig& config, ReplayReportInput& report) const;
  std::optional<CommandFailure> WriteReports(const ReplayReportInput& report,
                                             const ScenarioReportInput& section, viz::VizOutputs& viz);
  // Whether a report asked for prints the memory attribution or reserved,
  // explained: the text report (unless --quiet), --json and the viz files.
  bool NeedsAttribution() const {
    return !quiet_ || !json_.empty() || !viz_.html.empty() || !viz_.perfetto.empty() || !viz_.memory_viz.empty();
  }
  // `figures`: the recording reports its allocator's figures, compared in the recording's section.
  void NoteRecordedCheck(const ReplaySummary& s, bool figures) const;
  std::optional<CommandFailure> WriteJson(const ReplayReportInput& report, const ScenarioReportInput& section) const;
  std::optional<CommandFailure> OpenOutputs(const viz::VizOutputs& viz);

  std::string trace_;
  std::string allocator_;
  std::string bytes_limit_;
  std::vector<std::string> sets_;
  std::string placements_;
  std::string json_;
  std::string on_oom_ = "continue";
  std::string device_;
  std::string start_state_ = "seed";
  bool paranoid_ = false;
  bool check_recorded_ = false;
  bool quiet_ = false;
  bool no_advice_ = false;
  int jobs_ = DefaultJobs();
  viz::VizFlags viz_;
  io::OutputSet outputs_;  // created before the replay, renamed into place after it
  std::unique_ptr<FailureSpill> failure_spill_;  // --json's failures, streamed (bounded memory)
};

void ReplayCommand::Configure(CLI::App& app) {
  app.add_option("TRACE", trace_,
                 "the recording: any format hbmsim reads (hbmsim help text-trace for the text format)")
      ->required();
  app.add_option("--allocator", allocator_,
                 "a built-in policy (bfc, ...) or a YAML config such as configs/bfc_tensorflow.yaml (default: the "
                 "allocator that wrote the recording: torch for a PyTorch snapshot, bfc for a TF/JAX profile)");
  app.add_option(
      "--bytes-limit", bytes_limit_,
      "the allocator's memory limit: bytes or units (16GiB, 512MiB, 16GB); overrides the config and the "
      "trace's `# device_bytes:`; `auto`: a snapshot's reserved bytes at its recorded OOM + device_free");
  AddSetFlag(app, sets_, "KEY=VALUE: override one allocator option (repeatable)");
  app.add_option("--placements", placements_,
                 "write one CSV row per alloc: event,id,requested,status,offset,size");
  app.add_option("--json", json_,
                 "write the machine-readable report (stats, failures, peak_live_bytes) here");
  app.add_option("--on-oom", on_oom_,
                 "continue (default): record a failure and go on; stop: end at the first one")
      ->check(CLI::IsMember({"continue", "stop"}));
  AddDeviceFlag(app, device_, "replay the events of this device");
  AddStartStateFlag(app, start_state_,
                    "a recording that starts mid-run: seed (default) installs its segments as recorded and fails "
                    "at the start when they exceed the limit; place allocates its live blocks through the policy");
  app.add_flag("--quiet", quiet_, "print the verdict paragraph only (the files asked for are still written)");
  app.add_flag("--no-advice", no_advice_,
               "after a failure, do not try the allocator's settings (the 'What would fit' section)");
  AddJobsFlag(app, jobs_, "advice trials");
  app.add_flag("--paranoid", paranoid_, "check the allocator's invariants after every event (slow)");
  app.add_flag("--check-recorded", check_recorded_,
               "compare simulated addresses with the recorded ones (`addr=`); adds recorded_check to --json");
  app.add_option("--html", viz_.html,
                 "write a self-contained HTML report: timeline, address maps at the first failure and peak");
  app.add_option("--perfetto", viz_.perfetto, "write a Chrome trace-event JSON for ui.perfetto.dev");
  app.add_option("--memory-viz", viz_.memory_viz,
                 "write the run as a PyTorch memory snapshot for pytorch.org/memory_viz: OUT.pickle or "
                 "OUT.pkl, or OUT.json");
  app.add_option("--memory-viz-addresses", viz_.memory_viz_addresses,
                 "recorded|simulated: the addresses --memory-viz shows (default: the recorded ones when the "
                 "replay reproduced them all)")
      ->check(CLI::IsMember({"recorded", "simulated"}));
}

std::optional<CommandFailure> ReplayCommand::LoadConfig(const Scenario& scenario, AllocatorConfig& config,
                                                 std::vector<std::string>& applied) const {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), allocator_);
  if (!c.ok()) return BadInput(c.status());
  applied = ApplyRecordedSettings(scenario, *c);  // the recording's settings, under --set
  for (const std::string& kv : sets_) {
    if (absl::Status s = ApplySetOption(*c, kv); !s.ok()) return BadInput(s);
  }
  config = *std::move(c);
  return std::nullopt;
}

std::optional<CommandFailure> ReplayCommand::ParseOptions(ReplayOptions& options, ScenarioRequest& request) const {
  options.on_oom = on_oom_ == "stop" ? OnOom::kStop : OnOom::kContinue;
  options.paranoid = paranoid_;
  options.check_recorded = check_recorded_;
  if (jobs_ < 1) return CommandFailure{kExitBadInput, fmt::format("--jobs {}: must be at least 1", jobs_)};
  absl::StatusOr<ScenarioRequest> r = ParseScenarioRequest(device_, start_state_);
  if (!r.ok()) return BadInput(r.status());
  request = *r;
  return std::nullopt;
}

void ReplayCommand::NoteRecordedCheck(const ReplaySummary& s, bool figures) const {
  if (!check_recorded_ || figures) return;
  if (s.recorded.allocs_total == 0) {
    Note(fmt::format("hbmsim replay: --check-recorded: {} records no addresses (addr=); nothing was compared",
                     trace_));
  } else if (s.recorded.segments_total == 0) {
    Note(
        "hbmsim replay: --check-recorded: the trace has no segment events; only alloc addresses were "
        "compared");
  }
}

// Every output is checked against every input and created before any work,
// so a bad path fails fast and an input is never overwritten.
std::optional<CommandFailure> ReplayCommand::OpenOutputs(const viz::VizOutputs& viz) {
  std::vector<io::NamedPath> outputs = {{"--placements", placements_}, {"--json", json_}};
  for (const io::NamedPath& p : viz.Outputs()) outputs.push_back(p);
  absl::StatusOr<io::OutputSet> opened =
      io::OutputSet::Open(WithPartnerFiles({{"TRACE", trace_}, {"--allocator", allocator_}}), outputs);
  if (!opened.ok()) return BadInput(opened.status());
  // After the input check, which matters more: `--memory-viz t.trace` is refused for being the input.
  if (absl::Status s = viz.CheckFlags(); !s.ok()) return BadInput(s);
  outputs_ = *std::move(opened);
  return std::nullopt;
}

std::optional<CommandFailure> ReplayCommand::WriteJson(const ReplayReportInput& report,
                                                const ScenarioReportInput& section) const {
  io::OutputFile* out = outputs_.Get("--json");
  if (out == nullptr) return std::nullopt;
  nlohmann::ordered_json j = JsonReport(report);
  if (HasScenarioSection(*section.scenario)) j["recording"] = ScenarioJson(section);
  // The reader's notes, as the text report prints them (XLA's peak listing, its assignment beside offline's).
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const auto& [key, value] : section.scenario->recording->facts().metadata.entries) {
    if (key == "note") notes.push_back(value);
  }
  if (!notes.empty()) j["notes"] = std::move(notes);
  if (absl::Status s = WriteJsonReport(std::move(j), failure_spill_.get(), *out); !s.ok()) {
    return BadInput(io::WithRole("--json", s));
  }
  return std::nullopt;
}

// What watches the replay, each an observer of the engine.
struct ReplayWatchers {
  ReplayWatchers(ScenarioRun& run, const AllocatorConfig& config)
      : recorder(run.policy(), *config.policy),
        attribution(kLargestBuffersListed, TopUserFrames(run.reader())),
        reserved(run.policy(), TopUserFrames(run.reader())) {}
  ReplayRecorder recorder;
  MemoryAttribution attribution;                 // where the memory was
  ReservedExplainer reserved;                    // reserved, explained
  std::unique_ptr<PlacementsWriter> placements;  // --placements
};

// The report a recording gets is decided by its facts (replay_state_answers.h):
// a trace is replayed, a state is answered as inspect answers it.
std::optional<CommandFailure> ReplayCommand::Answer(ReplayReportInput& report) {
  ScenarioRequest request;
  if (auto f = ParseOptions(report.options, request)) return f;
  viz::VizOutputs viz(viz_);
  if (auto f = OpenOutputs(viz)) return f;
  absl::StatusOr<std::unique_ptr<Recording>> opened = OpenRecording(trace_);
  if (!opened.ok()) return BadInput(opened.status());
  std::shared_ptr<const Recording> recording(*std::move(opened));
  const RecordingAnswer answer = AnswerFor(recording->facts());
  if (answer == RecordingAnswer::kReplay) return Replay(std::move(recording), request, viz, report);
  return AnswerWithState(answer, std::move(recording), StateQuestionFor(request));
}

StateQuestion ReplayCommand::StateQuestionFor(const ScenarioRequest& request) {
  return StateQuestion{trace_,
                       request,
                       bytes_limit_,
                       allocator_,
                       quiet_,
                       {{"--placements", placements_},
                        {"--html", viz_.html},
                        {"--perfetto", viz_.perfetto},
                        {"--memory-viz", viz_.memory_viz}},
                       &outputs_};
}

std::optional<CommandFailure> ReplayCommand::Replay(std::shared_ptr<const Recording> recording,
                                                    const ScenarioRequest& request, viz::VizOutputs& viz,
                                                    ReplayReportInput& report) {
  absl::StatusOr<Scenario> scenario = MakeScenario(std::move(recording), request);
  if (!scenario.ok()) return BadInput(scenario.status());
  AllocatorConfig config;
  ScenarioReportInput section{&*scenario, nullptr, &config, {}, {}, check_recorded_, {}};
  if (auto f = ChooseConfig(*scenario, config, section.applied_settings)) return f;
  if (auto f = ChooseLimit(*scenario, config, report)) return f;
  section.limit = report.bytes_limit;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
      ScenarioRun::Prepare(*scenario, config, report.bytes_limit, report.options);
  if (!run.ok()) {
    return CommandFailure{kExitBadInput,
                          fmt::format("--allocator {}: {}", allocator_, std::string(run.status().message()))};
  }
  section.run = run->get();
  ReplayWatchers watchers(**run, config);
  if (auto f = Watch(**run, watchers)) return f;
  absl::StatusOr<ReplaySummary> summary =
      (*run)->Run(viz.Attach((*run)->driven(), report.options, (*run)->engine(), (*run)->reader()));
  if (!summary.ok()) return FailureFromStatus(summary.status());
  if (watchers.placements) {
    if (absl::Status s = watchers.placements->Finish(); !s.ok())
      return BadInput(io::WithRole("--placements", s));
  }
  if (absl::Status s = CheckReplayedSomething(*scenario, *summary, trace_); !s.ok()) return BadInput(s);
  NoteRecordedCheck(*summary, scenario->recording->facts().records_figures);
  if (NeedsAttribution()) {
    watchers.reserved.Finish(EventIndex(summary->events_read > 0 ? summary->events_read - 1 : 0));
    const absl::Status s = WalkPassedOverPeak(*scenario, config, report.bytes_limit, report.options, watchers.reserved);
    if (!s.ok()) return FailureFromStatus(absl::InternalError(s.message()));
  }
  FillReport(**run, config, *summary, watchers, report);
  AddTrials(*scenario, config, report);
  section.printed_above = watchers.recorder.first_failure_dump();
  if (auto f = WriteReports(report, section, viz)) return f;
  return CommandFailure{summary->failures > 0 ? kExitFailures : kExitOk, ""};
}

// The policy (--allocator, else the recording's own), the recording's
// settings under --set, and what the reader skipped, said.
std::optional<CommandFailure> ReplayCommand::ChooseConfig(const Scenario& scenario, AllocatorConfig& config,
                                                          std::vector<std::string>& applied) {
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, scenario, chosen);
  if (!allocator.ok()) return BadInput(allocator.status());
  if (!chosen.empty()) Note("hbmsim replay: " + chosen);
  allocator_ = *allocator;
  if (auto f = LoadConfig(scenario, config, applied)) return f;
  // What a reader skipped (e.g. XLA values without a live range) is said, never silent.
  for (const auto& [key, value] : scenario.recording->facts().metadata.entries) {
    if (key == "warning") Note(fmt::format("hbmsim replay: warning: {}", value));
  }
  return std::nullopt;
}

std::optional<CommandFailure> ReplayCommand::ChooseLimit(const Scenario& scenario,
                                                         const AllocatorConfig& config,
                                                         ReplayReportInput& report) const {
  absl::StatusOr<LimitChoice> limit = ReplayLimit(scenario, config, bytes_limit_);
  if (!limit.ok()) return BadInput(limit.status());
  report.bytes_limit = limit->limit;
  report.options.peak_from = scenario.start_events;  // the viz recorders read it too
  report.limit_source = limit->source;
  return std::nullopt;
}

// The watchers on the engine; --json's failures stream to a spill file.
std::optional<CommandFailure> ReplayCommand::Watch(ScenarioRun& run, ReplayWatchers& watchers) {
  if (io::OutputFile* csv = outputs_.Get("--placements")) {
    watchers.placements = std::make_unique<PlacementsWriter>(*csv);
  }
  if (!json_.empty()) {  // next to the JSON: the final file needs that space anyway, and /tmp may be RAM
    absl::StatusOr<std::unique_ptr<io::SpillFile>> spill = io::SpillFile::Create(io::DirectoryOf(json_));
    if (!spill.ok()) return BadInput(io::WithRole("--json", spill.status()));
    failure_spill_ = std::make_unique<FailureSpill>(*std::move(spill));
    watchers.recorder.SetFailureSink(failure_spill_.get());
  }
  watchers.recorder.WatchReader(run.reader());
  ReplayEngine& engine = run.engine();
  engine.AddObserver(&watchers.recorder);
  // Where the memory was and reserved, explained, cost a lookup and a label
  // on every alloc and free: kept only when something prints them.
  if (NeedsAttribution()) {
    engine.AddObserver(&watchers.attribution);
    engine.AddObserver(&watchers.reserved);
  }
  if (watchers.placements) engine.AddObserver(watchers.placements.get());
  return std::nullopt;
}

void ReplayCommand::FillReport(const ScenarioRun& run, const AllocatorConfig& config,
                               const ReplaySummary& summary, const ReplayWatchers& watchers,
                               ReplayReportInput& report) const {
  const bool attributed = NeedsAttribution();
  report.trace = trace_;
  report.config = &config;
  report.allocator = &run.policy();
  report.summary = &summary;
  report.recorder = &watchers.recorder;
  report.attribution = attributed ? &watchers.attribution : nullptr;
  report.reserved = attributed ? &watchers.reserved : nullptr;
}

// The trials after the replay: the advice after a failure, a warm start's two answers.
void ReplayCommand::AddTrials(const Scenario& scenario, const AllocatorConfig& config,
                              ReplayReportInput& report) const {
  const ReplayTrials trials{allocator_, sets_, jobs_, no_advice_, quiet_};
  AddAdvice(scenario, config, trials, report);
  AddStartAnswers(scenario, config, trials, report);
}

// The text report (or the verdict alone), --json, the viz files; then every output renamed into place.
std::optional<CommandFailure> ReplayCommand::WriteReports(const ReplayReportInput& report,
                                                          const ScenarioReportInput& section,
                                                          viz::VizOutputs& viz) {
  std::string text = quiet_ ? VerdictText(report) : TextReport(report);
  if (!quiet_ && HasScenarioSection(*section.scenario)) text += ScenarioText(section);
  // What the reader found worth saying beside the numbers (XLA's own peak listing and why it differs).
  for (const auto& [key, value] : section.scenario->recording->facts().metadata.entries) {
    if (key == "note" && !quiet_) text += fmt::format("{}\n", value);
  }
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (auto f = WriteJson(report, section)) return f;
  if (absl::Status s = viz.Write(report, outputs_); !s.ok()) return BadInput(s);
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return BadInput(s);
  return std::nullopt;
}

int ReplayCommand::Run() {
  ReplayReportInput report;
  std::optional<CommandFailure> outcome = Answer(report);
  FlushNotes(outcome ? outcome->code : kExitOk);
  if (!outcome) return kExitOk;
  if (!outcome->message.empty()) PrintError(fmt::format("hbmsim replay: {}", OneLineMessage(outcome->message)));
  return outcome->code;
}

const CommandRegistration kReplay(
    "replay", "replay a trace through one allocator: placements, failures (oom vs fragmentation), stats",
    []() -> std::unique_ptr<Command> { return std::make_unique<ReplayCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
