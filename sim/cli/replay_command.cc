// `hbmsim replay TRACE --allocator NAME|FILE.yaml ...`: replays a trace
// through one allocator and reports where and why allocations failed
// (docs/cli.md gives the flags, the CSV and the JSON keys).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/replay_advice.h"
#include "sim/cli/size_progress.h"
#include "sim/config/allocator_config.h"
#include "sim/config/device_presets.h"
#include "sim/engine/replay_engine.h"
#include "sim/inspect/held_report.h"
#include "sim/inspect/inspect_report.h"
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
#include "sim/whatif/size_search.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/trial.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/json_text.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"
#include "trace/io/output_set.h"

namespace hbmsim::cli {
namespace {

CommandFailure BadInput(const absl::Status& s) { return {kExitBadInput, std::string(s.message())}; }

// "Where the memory went" lists this many of the largest live buffers.
constexpr size_t kLargestBuffersListed = 10;

absl::StatusOr<LimitChoice> SmallestFittingLimit(const Scenario& scenario, const AllocatorConfig& config);

class ReplayCommand : public Command {
 public:
  void Configure(CLI::App& app) override;
  int Run() override;

 private:
  // Each step returns a CommandFailure or fills its output.
  std::optional<CommandFailure> ParseOptions(ReplayOptions& options, ScenarioRequest& request) const;
  std::optional<CommandFailure> LoadConfig(const Scenario& scenario, AllocatorConfig& config,
                                    std::vector<std::string>& applied) const;
  std::optional<CommandFailure> Replay(ReplayReportInput& report);
  std::optional<CommandFailure> InspectState(std::shared_ptr<const Recording> recording,
                                      const ScenarioRequest& request);
  std::optional<CommandFailure> ReportHeld(std::shared_ptr<const Recording> recording, const ScenarioRequest& request);
  void DropReplayOutputs();
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
  app.add_option("--set", sets_, "KEY=VALUE: override one allocator option (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--placements", placements_,
                 "write one CSV row per alloc: event,id,requested,status,offset,size");
  app.add_option("--json", json_,
                 "write the machine-readable report (stats, failures, peak_live_bytes) here");
  app.add_option("--on-oom", on_oom_,
                 "continue (default): record a failure and go on; stop: end at the first one")
      ->check(CLI::IsMember({"continue", "stop"}));
  app.add_option("--device", device_,
                 "replay the events of this device (default: the one with the recorded OOM, else the one "
                 "with the most events; for formats that do not list their devices, the first event's)");
  app.add_option(
         "--start-state", start_state_,
         "a recording that starts mid-run: seed (default) installs its segments as recorded and fails "
         "at the start when they exceed the limit; place allocates its live blocks through the policy")
      ->check(CLI::IsMember({"seed", "place"}));
  app.add_flag("--quiet", quiet_, "print the verdict paragraph only (the files asked for are still written)");
  app.add_flag("--no-advice", no_advice_,
               "after a failure, do not try the allocator's settings (the 'What would fit' section)");
  app.add_option("--jobs", jobs_, "advice trials run in parallel (default: all cores); the output never depends on it");
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
    Note("hbmsim replay: --check-recorded: the trace has no segment events; only alloc addresses were compared");
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

std::optional<CommandFailure> ReplayCommand::Replay(ReplayReportInput& report) {
  ScenarioRequest request;
  if (auto f = ParseOptions(report.options, request)) return f;
  viz::VizOutputs viz(viz_);
  if (auto f = OpenOutputs(viz)) return f;
  absl::StatusOr<std::unique_ptr<Recording>> opened = OpenRecording(trace_);
  if (!opened.ok()) return BadInput(opened.status());
  std::shared_ptr<const Recording> recording(*std::move(opened));
  if (recording->facts().held_state != nullptr || recording->facts().state_only) {
    DropReplayOutputs();
    if (recording->facts().held_state != nullptr) return ReportHeld(std::move(recording), request);
    return InspectState(std::move(recording), request);
  }
  absl::StatusOr<Scenario> scenario = MakeScenario(std::move(recording), request);
  if (!scenario.ok()) return BadInput(scenario.status());
  std::string chosen;
  absl::StatusOr<std::string> allocator = AllocatorFor(allocator_, *scenario, chosen);
  if (!allocator.ok()) return BadInput(allocator.status());
  if (!chosen.empty()) Note("hbmsim replay: " + chosen);
  allocator_ = *allocator;
  AllocatorConfig config;
  ScenarioReportInput section{&*scenario, nullptr, &config, {}, {}, check_recorded_, {}};
  if (auto f = LoadConfig(*scenario, config, section.applied_settings)) return f;
  // What a reader skipped (e.g. XLA values without a live range) is said, never silent.
  for (const auto& [key, value] : scenario->recording->facts().metadata.entries) {
    if (key == "warning") Note(fmt::format("hbmsim replay: warning: {}", value));
  }
  absl::StatusOr<LimitChoice> limit = ResolveLimit(*scenario, config, bytes_limit_);
  if (!limit.ok() && bytes_limit_.empty() && scenario->recording->facts().metadata.Find("compiled_program")) {
    limit = SmallestFittingLimit(*scenario, config);
  }
  if (!limit.ok()) return BadInput(limit.status());
  report.bytes_limit = section.limit = limit->limit;
  report.options.peak_from = scenario->start_events;  // the viz recorders read it too
  report.limit_source = limit->source;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
      ScenarioRun::Prepare(*scenario, config, limit->limit, report.options);
  if (!run.ok()) {
    return CommandFailure{kExitBadInput,
                   fmt::format("--allocator {}: {}", allocator_, std::string(run.status().message()))};
  }
  section.run = run->get();
  std::unique_ptr<PlacementsWriter> placements;
  if (io::OutputFile* csv = outputs_.Get("--placements")) placements = std::make_unique<PlacementsWriter>(*csv);
  ReplayRecorder recorder((*run)->policy(), *config.policy);
  if (!json_.empty()) {  // next to the JSON: the final file needs that space anyway, and /tmp may be RAM
    absl::StatusOr<std::unique_ptr<io::SpillFile>> spill = io::SpillFile::Create(io::DirectoryOf(json_));
    if (!spill.ok()) return BadInput(io::WithRole("--json", spill.status()));
    failure_spill_ = std::make_unique<FailureSpill>(*std::move(spill));
    recorder.SetFailureSink(failure_spill_.get());
  }
  const EventReader& events = (*run)->reader();
  recorder.WatchReader(events);
  MemoryAttribution attribution(kLargestBuffersListed, TopUserFrames(events));
  ReservedExplainer reserved((*run)->policy(), TopUserFrames(events));
  ReplayEngine& engine = (*run)->engine();
  engine.AddObserver(&recorder);
  // Where the memory was and reserved, explained, cost a lookup and a label
  // on every alloc and free: kept only when something prints them.
  const bool attributed = NeedsAttribution();
  if (attributed) {
    engine.AddObserver(&attribution);
    engine.AddObserver(&reserved);
  }
  if (placements) engine.AddObserver(placements.get());
  absl::StatusOr<ReplaySummary> summary =
      (*run)->Run(viz.Attach((*run)->driven(), report.options, engine, (*run)->reader()));
  if (!summary.ok()) {
    const bool internal = summary.status().code() == absl::StatusCode::kInternal;
    return CommandFailure{
        internal ? kExitInternal : kExitBadInput,
        fmt::format("{}{}", internal ? "internal error: " : "", std::string(summary.status().message()))};
  }
  if (placements) {
    if (absl::Status s = placements->Finish(); !s.ok()) return BadInput(io::WithRole("--placements", s));
  }
  if (absl::Status s = CheckReplayedSomething(*scenario, *summary, trace_); !s.ok()) return BadInput(s);
  NoteRecordedCheck(*summary, scenario->recording->facts().records_figures);
  if (attributed) {
    reserved.Finish(EventIndex(summary->events_read > 0 ? summary->events_read - 1 : 0));
    const absl::Status s = WalkPassedOverPeak(*scenario, config, limit->limit, report.options, reserved);
    if (!s.ok()) return CommandFailure{kExitInternal, fmt::format("internal error: {}", std::string(s.message()))};
  }
  report.trace = trace_;
  report.config = &config;
  report.allocator = &(*run)->policy();
  report.summary = &*summary;
  report.recorder = &recorder;
  report.attribution = attributed ? &attribution : nullptr;
  report.reserved = attributed ? &reserved : nullptr;
  const ReplayTrials trials{allocator_, sets_, jobs_, no_advice_, quiet_};
  AddAdvice(*scenario, config, trials, report);
  AddStartAnswers(*scenario, config, trials, report);
  std::string text = quiet_ ? VerdictText(report) : TextReport(report);
  section.printed_above = recorder.first_failure_dump();
  if (!quiet_ && HasScenarioSection(*scenario)) text += ScenarioText(section);
  // What the reader found worth saying beside the numbers (XLA's own peak listing and why it differs).
  for (const auto& [key, value] : scenario->recording->facts().metadata.entries) {
    if (key == "note" && !quiet_) text += fmt::format("{}\n", value);
  }
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (auto f = WriteJson(report, section)) return f;
  if (absl::Status s = viz.Write(report, outputs_); !s.ok()) return BadInput(s);
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return BadInput(s);
  return CommandFailure{summary->failures > 0 ? kExitFailures : kExitOk, ""};
}

// A compiled program (an XLA dump) has no device limit: the question is its
// peak and what each policy needs, so without --bytes-limit the replay runs at
// the smallest limit the policy fits (the `hbmsim size` search).
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

// A recording that holds a state and no events is answered with inspect's
// report, so the outputs that draw or list a replay have nothing in them:
// they are not written (not left as empty files, exit 0, as fuzz_outputs
// found), each with a note. The Python module asks for --placements and
// --html on every replay, so this is a note, not an error.
void ReplayCommand::DropReplayOutputs() {
  for (const auto& [flag, path] :
       std::vector<std::pair<const char*, const std::string*>>{{"--placements", &placements_},
                                                               {"--html", &viz_.html},
                                                               {"--perfetto", &viz_.perfetto},
                                                               {"--memory-viz", &viz_.memory_viz}}) {
    if (path->empty()) continue;
    outputs_.Drop(flag);
    Note(fmt::format("hbmsim replay: {} {} not written: {} holds an allocator state and no trace to replay",
                     flag, *path, trace_));
  }
}

// A state snapshot (segments, no history) has nothing to replay: its state
// is what the user has, so replay answers with `hbmsim inspect`'s analysis
// (exit 0) instead of refusing the file.
std::optional<CommandFailure> ReplayCommand::InspectState(std::shared_ptr<const Recording> recording,
                                                   const ScenarioRequest& request) {
  inspect::SourceOptions options;
  options.path = trace_;
  options.device = request.device;
  if (!request.device_name.empty()) {  // a snapshot numbers its devices and names none
    return CommandFailure{kExitBadInput,
                          fmt::format("--device {}: expected a device number ({} names no devices)",
                                      request.device_name, trace_)};
  }
  if (!bytes_limit_.empty()) {
    absl::StatusOr<ParsedLimit> b = ParseLimitOrPreset(bytes_limit_, "--bytes-limit");  // a size or a preset
    if (!b.ok()) return BadInput(b.status());
    options.bytes_limit = b->bytes;
  }
  absl::StatusOr<inspect::InspectedState> state = inspect::InspectRecording(std::move(recording), options);
  if (!state.ok()) return BadInput(state.status());
  const inspect::InspectReport report = inspect::MakeInspectReport(trace_, *state, {}, StreamId(0));
  const std::string text = fmt::format(
      "{} holds an allocator state and no trace to replay: its state, analysed as `hbmsim inspect` does "
      "(--probe SIZE asks what the torch policy would do with a request)\n\n{}",
      trace_, quiet_ ? "" : inspect::RenderInspectText(report));
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (!json_.empty()) {
    if (absl::Status s = outputs_.Write("--json", JsonText(inspect::RenderInspectJson(report), 2) + "\n");
        !s.ok()) {
      return BadInput(s);
    }
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return BadInput(s);
  return CommandFailure{kExitOk, ""};
}

// A held state (a JAX device memory profile) is one moment without
// addresses: nothing to replay in time, so replay answers with the held
// report `hbmsim inspect` gives (exit 0); inspect's --probe places the buffers.
std::optional<CommandFailure> ReplayCommand::ReportHeld(std::shared_ptr<const Recording> recording,
                                                 const ScenarioRequest& request) {
  inspect::HeldOptions options;
  options.device = request.device;
  options.device_name = request.device_name;
  options.allocator = allocator_;
  if (!bytes_limit_.empty()) {
    absl::StatusOr<ParsedLimit> b = ParseLimitOrPreset(bytes_limit_, "--bytes-limit");  // a size or a preset
    if (!b.ok()) return BadInput(b.status());
    options.limit = b->bytes;
  }
  absl::StatusOr<inspect::HeldReport> report = inspect::MakeHeldReport(std::move(recording), options);
  if (!report.ok()) return BadInput(report.status());
  const std::string text = fmt::format(
      "{} holds what a JAX runtime had live at one moment, with no addresses and no trace to replay: its state "
      "(`hbmsim inspect {} --probe SIZE --bytes-limit LIMIT` asks whether a request would fit)\n\n{}",
      report->file, trace_, quiet_ ? "" : inspect::RenderHeldText(*report));
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (!json_.empty()) {
    if (absl::Status s = outputs_.Write("--json", inspect::HeldJsonText(*report)); !s.ok()) {
      return BadInput(s);
    }
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return BadInput(s);
  return CommandFailure{kExitOk, ""};
}

int ReplayCommand::Run() {
  ReplayReportInput report;
  std::optional<CommandFailure> outcome = Replay(report);
  FlushNotes(outcome ? outcome->code : kExitOk);
  if (!outcome) return kExitOk;
  if (!outcome->message.empty()) PrintError(fmt::format("hbmsim replay: {}", OneLineMessage(outcome->message)));
  return outcome->code;
}

const CommandRegistration kReplay(
    "replay", "replay a trace through one allocator: placements, failures (oom vs fragmentation), stats",
    []() -> std::unique_ptr<Command> { return std::make_unique<ReplayCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
