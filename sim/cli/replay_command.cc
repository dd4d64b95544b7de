// `hbmsim replay TRACE --allocator NAME|FILE.yaml ...`: replays a trace
// through one allocator and reports where and why allocations failed
// (shared/spec/cli-contract.md fixes the flags, the CSV and the JSON keys).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/config/allocator_config.h"
#include "sim/engine/open_trace.h"
#include "sim/engine/replay_engine.h"
#include "sim/report/failure_spill.h"
#include "sim/report/placements_writer.h"
#include "sim/report/replay_recorder.h"
#include "sim/report/replay_report.h"
#include "sim/viz/viz_outputs.h"
#include "sim/torch_replay/snapshot_replay.h"
#include "trace/core/numbers.h"
#include "trace/io/input_file.h"
#include "trace/io/output_set.h"

namespace hbmsim::cli {
namespace {

// A failed step: what to print on stderr (one line) and the exit code.
struct Failure {
  int code;
  std::string message;
};

Failure BadInput(const absl::Status& s) { return {kExitBadInput, std::string(s.message())}; }

class ReplayCommand : public Command {
 public:
  void Configure(CLI::App& app) override;
  int Run() override;

 private:
  // Each step returns a Failure or fills its output.
  std::optional<Failure> LoadConfig(AllocatorConfig& config) const;
  std::optional<Failure> ResolveLimit(const AllocatorConfig& config, const EventReader& reader, Bytes& limit,
                                      std::string& source) const;
  std::optional<Failure> ParseOptions(ReplayOptions& options) const;
  std::optional<Failure> OpenSnapshot(const ReplayOptions& options);
  std::optional<Failure> SnapshotLimit(const AllocatorConfig& config, Bytes& limit,
                                       std::string& source) const;
  std::optional<Failure> Replay(ReplayReportInput& report);
  void NoteRecordedCheck(const ReplaySummary& s) const;
  std::optional<Failure> WriteJson(const ReplayReportInput& report) const;
  std::optional<Failure> OpenFiles(const viz::VizOutputs& viz);
  std::optional<Failure> CheckSomethingReplayed(const ReplaySummary& s) const;

  std::string trace_;
  std::string allocator_;
  std::string bytes_limit_;
  std::vector<std::string> sets_;
  std::string placements_;
  std::string json_;
  std::string on_oom_ = "continue";
  std::string device_;
  bool paranoid_ = false;
  bool check_recorded_ = false;
  viz::VizFlags viz_;
  std::unique_ptr<SnapshotReplay> snapshot_;  // set when TRACE is a PyTorch snapshot
  io::InputFile input_;                       // TRACE, spooled once when it is a pipe
  io::OutputSet outputs_;                     // opened before the replay, committed after it
  std::unique_ptr<FailureSpill> failure_spill_;  // --json's failures, streamed (bounded memory)
};

void ReplayCommand::Configure(CLI::App& app) {
  app.add_option("TRACE", trace_,
                 "the trace: text format v1 (shared/spec/trace-format.md) or a PyTorch snapshot")
      ->required();
  app.add_option("--allocator", allocator_,
                 "a built-in policy (bfc, ...) or a YAML config such as configs/bfc_tensorflow.yaml")
      ->required();
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
                 "replay the events of this device (default: the device of the first event)");
  app.add_flag("--paranoid", paranoid_, "check the allocator's invariants after every event (slow)");
  app.add_flag("--check-recorded", check_recorded_,
               "compare simulated addresses with the recorded ones (`addr=`); adds recorded_check to --json");
  app.add_option("--html", viz_.html,
                 "write a self-contained HTML report: timeline, address maps at the first failure and peak");
  app.add_option("--perfetto", viz_.perfetto, "write a Chrome trace-event JSON for ui.perfetto.dev");
  app.add_option("--memory-viz", viz_.memory_viz,
                 "write the run as a PyTorch memory snapshot for pytorch.org/memory_viz (.pickle, or .json)");
}

std::optional<Failure> ReplayCommand::LoadConfig(AllocatorConfig& config) const {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), allocator_);
  if (!c.ok()) return BadInput(c.status());
  if (snapshot_) snapshot_->Configure(*c);  // the recording's settings, under --set
  for (const std::string& kv : sets_) {
    if (absl::Status s = ApplySetOption(*c, kv); !s.ok()) return BadInput(s);
  }
  config = *std::move(c);
  return std::nullopt;
}

// --bytes-limit, else the config (YAML or --set bytes_limit), else the
// trace's `# device_bytes:` metadata; otherwise a usage error.
std::optional<Failure> ReplayCommand::ResolveLimit(const AllocatorConfig& config, const EventReader& reader,
                                                   Bytes& limit, std::string& source) const {
  if (bytes_limit_ == "auto" || (bytes_limit_.empty() && !config.bytes_limit && snapshot_)) {
    return SnapshotLimit(config, limit, source);
  }
  if (!bytes_limit_.empty()) {
    absl::StatusOr<Bytes> b = ParseBytes(bytes_limit_, /*allow_more_units=*/true);
    if (!b.ok())
      return Failure{kExitBadInput,
                     fmt::format("--bytes-limit {}: {}", bytes_limit_, std::string(b.status().message()))};
    limit = *b;
    source = "--bytes-limit";
    return std::nullopt;
  }
  if (config.bytes_limit) {
    limit = *config.bytes_limit;
    source = config.source == "built-in" ? "--set bytes_limit" : config.source;
    return std::nullopt;
  }
  if (const std::string* device_bytes = reader.metadata().Find("device_bytes")) {
    absl::StatusOr<Bytes> b = ParseBytes(*device_bytes, /*allow_more_units=*/true);
    if (!b.ok()) {
      return Failure{kExitBadInput,
                     fmt::format("{}: metadata device_bytes: {}", trace_, std::string(b.status().message()))};
    }
    limit = *b;
    source = "the trace's # device_bytes";
    return std::nullopt;
  }
  return Failure{
      kExitBadInput,
      fmt::format("no memory limit: pass --bytes-limit, set bytes_limit in the allocator config, or "
                  "record `# device_bytes: N` in {}",
                  trace_)};
}

// A snapshot with an `oom` entry implies the device's capacity (reserved at
// the OOM + the free bytes cudaMemGetInfo reported); without one the torch
// policy runs unlimited, as the recorded job never hit the capacity.
std::optional<Failure> ReplayCommand::SnapshotLimit(const AllocatorConfig& config, Bytes& limit,
                                                    std::string& source) const {
  if (snapshot_ && snapshot_->oom_capacity()) {
    limit = snapshot_->oom_capacity()->capacity;
    source = "auto (reserved at the recorded OOM + its device_free)";
    return std::nullopt;
  }
  if (bytes_limit_.empty() && snapshot_ && config.policy->name == "torch") {
    limit = Bytes::Max();
    source = "none: unlimited (the snapshot records no OOM)";
    return std::nullopt;
  }
  return Failure{kExitBadInput,
                 snapshot_ ? fmt::format("--bytes-limit: {} records no oom on device {}; pass a size", trace_,
                                         snapshot_->device().value())
                           : std::string("--bytes-limit auto: only for PyTorch snapshots with an oom entry")};
}

std::optional<Failure> ReplayCommand::OpenSnapshot(const ReplayOptions& options) {
  absl::StatusOr<TraceFormat> format = DetectTraceFormat(input_.path());
  if (!format.ok() || *format != TraceFormat::kTorchSnapshot) return std::nullopt;  // OpenTrace reports it
  absl::StatusOr<std::unique_ptr<SnapshotReplay>> s = SnapshotReplay::Open(input_.path(), options.device);
  if (!s.ok()) return BadInput(s.status());
  snapshot_ = *std::move(s);
  return std::nullopt;
}

std::optional<Failure> ReplayCommand::ParseOptions(ReplayOptions& options) const {
  options.on_oom = on_oom_ == "stop" ? OnOom::kStop : OnOom::kContinue;
  options.paranoid = paranoid_;
  options.check_recorded = check_recorded_;
  if (!device_.empty()) {
    absl::StatusOr<uint64_t> d = ParseU64(device_);
    if (!d.ok())
      return Failure{kExitBadInput,
                     fmt::format("--device {}: {}", device_, std::string(d.status().message()))};
    options.device = DeviceId(*d);
  }
  return std::nullopt;
}

// An empty input is not a job that fits, and a --device with nothing on it
// replayed nothing: both are bad input (exit 2), never "Every allocation fit."
// A PyTorch snapshot is state as well as events: one with no block and no
// trace entry still replays its segments (an empty device is an answer).
std::optional<Failure> ReplayCommand::CheckSomethingReplayed(const ReplaySummary& s) const {
  if (snapshot_) return std::nullopt;
  if (s.events_read == 0) return Failure{kExitBadInput, fmt::format("no events in {}", trace_)};
  if (s.events_replayed > 0) return std::nullopt;
  std::string devices;
  for (const DeviceId d : s.other_devices) devices += fmt::format("{}{}", devices.empty() ? "" : ", ", d.value());
  if (s.other_devices.size() == kMaxListedDevices) devices += ", ...";
  return Failure{kExitBadInput, fmt::format("--device {}: no event of {} is on device {}; devices with events: {}",
                                            s.device->value(), trace_, s.device->value(), devices)};
}

// Every output is checked against every input and created before any work,
// so a bad path fails fast and an input is never overwritten.
std::optional<Failure> ReplayCommand::OpenFiles(const viz::VizOutputs& viz) {
  absl::StatusOr<io::InputFile> input = io::OpenInputFile(trace_);
  if (!input.ok()) return BadInput(input.status());
  std::vector<io::NamedPath> outputs = {{"--placements", placements_}, {"--json", json_}};
  for (const io::NamedPath& p : viz.Outputs()) outputs.push_back(p);
  absl::StatusOr<io::OutputSet> opened = io::OutputSet::Open({{"TRACE", trace_}, {"--allocator", allocator_}}, outputs);
  if (!opened.ok()) return BadInput(opened.status());
  input_ = *std::move(input);
  outputs_ = *std::move(opened);
  return std::nullopt;
}

void ReplayCommand::NoteRecordedCheck(const ReplaySummary& s) const {
  if (!check_recorded_) return;
  if (s.recorded.allocs_total == 0) {
    fmt::print(stderr,
               "hbmsim replay: --check-recorded: {} records no addresses (addr=); nothing was compared\n",
               trace_);
  } else if (s.recorded.segments_total == 0) {
    fmt::print(stderr,
               "hbmsim replay: --check-recorded: the trace has no segment events; only alloc addresses were "
               "compared\n");
  }
}

std::optional<Failure> ReplayCommand::WriteJson(const ReplayReportInput& report) const {
  io::OutputFile* out = outputs_.Get("--json");
  if (out == nullptr) return std::nullopt;
  nlohmann::ordered_json j = JsonReport(report);
  if (snapshot_) j["torch_snapshot"] = snapshot_->JsonSection();
  if (absl::Status s = WriteJsonReport(std::move(j), failure_spill_.get(), *out); !s.ok()) {
    return BadInput(io::WithRole("--json", s));
  }
  return std::nullopt;
}

std::optional<Failure> ReplayCommand::Replay(ReplayReportInput& report) {
  AllocatorConfig config;
  viz::VizOutputs viz(viz_);
  if (auto f = ParseOptions(report.options)) return f;
  if (auto f = OpenFiles(viz)) return f;
  if (auto f = OpenSnapshot(report.options)) return f;
  if (auto f = LoadConfig(config)) return f;
  absl::StatusOr<std::unique_ptr<EventReader>> opened = std::unique_ptr<EventReader>();
  if (!snapshot_) opened = OpenTrace(std::move(input_));
  if (!opened.ok()) return BadInput(opened.status());
  EventReader& reader = snapshot_ ? snapshot_->reader() : **opened;
  // What a reader skipped (e.g. XLA values without a live range) is said, never silent.
  for (const auto& [key, value] : reader.metadata().entries) {
    if (key == "warning") fmt::print(stderr, "hbmsim replay: warning: {}\n", value);
  }
  if (auto f = ResolveLimit(config, reader, report.bytes_limit, report.limit_source)) return f;
  absl::StatusOr<std::unique_ptr<Allocator>> allocator = BuildAllocator(config, report.bytes_limit);
  if (!allocator.ok())
    return Failure{kExitBadInput,
                   fmt::format("--allocator {}: {}", allocator_, std::string(allocator.status().message()))};
  std::unique_ptr<PlacementsWriter> placements;
  if (io::OutputFile* csv = outputs_.Get("--placements")) placements = std::make_unique<PlacementsWriter>(*csv);
  if (!json_.empty()) {
    absl::StatusOr<std::unique_ptr<io::SpillFile>> spill = io::SpillFile::Create(io::DirectoryOf(json_));
    if (!spill.ok()) return BadInput(io::WithRole("--json", spill.status()));
    failure_spill_ = std::make_unique<FailureSpill>(*std::move(spill));
  }
  Allocator* driven = allocator->get();
  if (snapshot_) {  // torch: the seeded initial state, behind an adapter
    absl::StatusOr<Allocator*> prepared = snapshot_->Prepare(**allocator);
    if (!prepared.ok()) return BadInput(prepared.status());
    driven = *prepared;
  }
  ReplayRecorder recorder(**allocator);
  ReplayEngine engine(*driven, report.options);
  engine.AddObserver(&recorder);
  if (placements) engine.AddObserver(placements.get());
  if (failure_spill_) engine.AddObserver(failure_spill_.get());
  if (snapshot_) engine.AddObserver(snapshot_->observer());
  absl::StatusOr<ReplaySummary> summary = engine.Run(viz.Attach(*driven, report.options, engine, reader));
  if (!summary.ok()) {
    const bool internal = summary.status().code() == absl::StatusCode::kInternal;
    return Failure{
        internal ? kExitInternal : kExitBadInput,
        fmt::format("{}{}", internal ? "internal error: " : "", std::string(summary.status().message()))};
  }
  if (placements) {
    if (absl::Status s = placements->Finish(); !s.ok()) return BadInput(io::WithRole("--placements", s));
  }
  if (auto f = CheckSomethingReplayed(*summary)) return f;
  if (snapshot_) snapshot_->Finish(*summary);
  NoteRecordedCheck(*summary);
  report.trace = trace_;
  report.config = &config;
  report.allocator = allocator->get();
  report.summary = &*summary;
  report.recorder = &recorder;
  std::string text = TextReport(report);
  if (snapshot_) text += snapshot_->TextSection(check_recorded_);
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return BadInput(s);
  if (auto f = WriteJson(report)) return f;
  if (absl::Status s = viz.Write(report, outputs_); !s.ok()) return BadInput(s);
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return BadInput(s);
  return Failure{summary->failures > 0 ? kExitFailures : kExitOk, ""};
}

int ReplayCommand::Run() {
  ReplayReportInput report;
  std::optional<Failure> outcome = Replay(report);
  if (!outcome) return kExitOk;
  if (!outcome->message.empty()) {
    fmt::print(stderr, "hbmsim replay: {}\n", OneLineMessage(input_.Rename(outcome->message)));
  }
  return outcome->code;
}

const CommandRegistration kReplay(
    "replay", "replay a trace through one allocator: placements, failures (oom vs fragmentation), stats",
    []() -> std::unique_ptr<Command> { return std::make_unique<ReplayCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
