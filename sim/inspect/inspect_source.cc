#include "sim/inspect/inspect_source.h"

#include <utility>

#include "fmt/format.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "sim/scenario/scenario_config.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"

namespace hbmsim::sim::inspect {
namespace {

// Ends a trace right after the event --at names: its index, a mark's label
// (or the action before the label's ':'), or "oom" (the first recorded OOM).
class StopAt : public EventReader {
 public:
  StopAt(EventReader& inner, std::string at) : inner_(inner), at_(std::move(at)) {
    if (absl::StatusOr<uint64_t> n = ParseU64(at_); n.ok()) index_ = *n;
  }
  absl::StatusOr<bool> Next(Event& e) override {
    if (reached_) return false;
    absl::StatusOr<bool> more = inner_.Next(e);
    if (!more.ok() || !*more) return more;
    const uint64_t i = count_++;
    reached_ = index_ ? i == *index_ : Matches(e);
    if (reached_) {
      reached_index_ = i;
      location_ = inner_.Location();
    }
    return true;
  }
  const TraceMetadata& metadata() const override { return inner_.metadata(); }
  std::string Location() const override { return inner_.Location(); }

  bool reached() const { return reached_; }
  uint64_t reached_index() const { return reached_index_; }
  uint64_t events() const { return count_; }
  const std::string& location() const { return location_; }

 private:
  bool Matches(const Event& e) const {
    if (at_ == "oom") return e.kind == EventKind::kAlloc && e.tag == "oom";
    if (e.kind != EventKind::kMark) return false;
    return e.label == at_ || e.label.substr(0, e.label.find(':')) == at_;
  }

  EventReader& inner_;
  std::string at_;
  std::optional<uint64_t> index_;
  bool reached_ = false;
  uint64_t reached_index_ = 0;
  uint64_t count_ = 0;
  std::string location_;
};

std::string CapacityText(const SourceOptions& o, const std::optional<Bytes>& from_oom) {
  if (o.bytes_limit) return fmt::format("{} B from --bytes-limit", o.bytes_limit->value());
  if (from_oom)
    return fmt::format("{} B from the recorded OOM (reserved then + its device_free)", from_oom->value());
  return "unlimited (a snapshot does not record the device's size; --bytes-limit sets it)";
}

// The device to analyse with no --device: the one every other command (and
// inspect --at) replays, by the scenario's rules (the recorded OOM's, else the
// one with the most events); a file with no trace, the first holding a segment.
std::pair<std::optional<DeviceId>, std::string> DeviceOfState(const Recording& recording,
                                                              const SourceOptions& o) {
  if (o.device) return {o.device, "--device"};
  const std::pair<std::optional<DeviceId>, std::string> first{std::nullopt, "the first device holding a segment"};
  const std::optional<std::vector<DeviceEvents>> listed = recording.facts().devices;
  if (!listed || listed->empty()) return first;
  absl::StatusOr<std::pair<DeviceId, std::string>> chosen = ChooseDevice(recording, *listed, std::nullopt);
  if (!chosen.ok()) return first;
  return *chosen;
}

absl::Status NoStateAnalysis(const SourceOptions& o, std::string_view policy) {
  return absl::InvalidArgumentError(
      fmt::format("{}: the {} policy has no state analysis for inspect; `hbmsim replay {}` shows where the "
                  "memory was at the peak and at the first failure",
                  o.path, policy, o.path));
}

// --device N names a device the snapshot holds nothing of (no segment, no
// trace): an empty report would look like an empty device, so it is an error.
absl::Status NoSuchDevice(const SourceOptions& o, const RecordedState& s) {
  std::vector<uint64_t> ids;
  for (DeviceId d : s.devices_with_segments) ids.push_back(d.value());
  return absl::InvalidArgumentError(
      fmt::format("--device {}: {} holds nothing on device {} (devices holding "
                  "segments: {})",
                  o.device->value(), o.path, o.device->value(),
                  ids.empty() ? std::string("none") : fmt::format("{}", fmt::join(ids, ", "))));
}

// The policy that ran the job (or --allocator's), when its row can analyse a
// state: the state is shown as that runtime counts it. Errors name the file
// and the policy.
absl::StatusOr<AllocatorConfig> AnalysingPolicy(const Recording& recording, const SourceOptions& o) {
  if (!o.allocator.empty()) {
    absl::StatusOr<AllocatorConfig> chosen = ResolveAllocator(BuiltinPolicies(), o.allocator);
    if (!chosen.ok()) return chosen.status();
    if (!chosen->policy->state_analysis.analyze) return NoStateAnalysis(o, chosen->policy->name);
    return chosen;
  }
  const PolicySpec* row = RecordedPolicy(recording);
  if (row == nullptr) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: {} does not say which allocator ran the job, and inspect shows a state as that allocator "
        "counts it (a text trace names it with `# allocator: NAME`; or pass --allocator NAME)",
        o.path, recording.facts().description));
  }
  if (!row->state_analysis.analyze) return NoStateAnalysis(o, row->name);
  return ResolveAllocator(BuiltinPolicies(), row->name);
}

// The recording's own state (a snapshot's segments) seeded into the policy
// that ran the job, configured from its recorded settings.
absl::StatusOr<InspectedState> FromRecordedState(std::shared_ptr<const Recording> recording,
                                                 const SourceOptions& o) {
  auto [device, device_reason] = DeviceOfState(*recording, o);
  std::optional<RecordedState> s = recording->facts().FinalState(device);
  if (!s) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: {} records no allocator state (inspect reads PyTorch memory snapshots); `hbmsim replay "
        "{}` shows where the memory was at the peak and at the first failure",
        o.path, recording->facts().description, o.path));
  }
  if (o.device && s->segments.empty() && s->trace_entries == 0) return NoSuchDevice(o, *s);
  absl::StatusOr<AllocatorConfig> config = AnalysingPolicy(*recording, o);
  if (!config.ok()) return config.status();
  InspectedState out;
  out.settings = ApplyRecordedSettings(
      recording->facts().device(s->device).settings.value_or(RecordedSettings{}), s->device, *config);
  absl::StatusOr<std::unique_ptr<Allocator>> built =
      BuildAllocator(*config, o.bytes_limit.value_or(Bytes::Max()));
  if (!built.ok()) return built.status();
  out.owner = *std::move(built);
  // The segments go in through the policy's seed hook, as ScenarioRun installs
  // a start state; no engine follows, so the seeded blocks' answers are unused.
  const RecordingHooks& hooks = config->policy->recording;
  if (!hooks.seed) {
    return absl::InvalidArgumentError(
        fmt::format("{}: the {} policy cannot take a recorded state", o.path, config->policy->name));
  }
  if (absl::StatusOr<std::vector<SeededBlock>> seeded = hooks.seed(*out.owner, s->segments); !seeded.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", o.path, std::string(seeded.status().message())));
  }
  out.policy = out.owner.get();
  out.row = config->policy;
  out.device = s->device;
  out.device_reason = device_reason;
  out.source = recording->facts().description;
  out.frames = std::move(s->frames);
  out.where = fmt::format(
      "the snapshot's segments ({} on device {}{})", s->segments.size(), s->device.value(),
      s->trace_entries > 0
          ? fmt::format("; its trace of {} entries is not replayed without --at", s->trace_entries)
          : std::string("; no trace"));
  out.capacity = CapacityText(o, std::nullopt);
  if (s->devices_with_segments.size() > 1) {
    std::vector<uint64_t> ids;
    for (DeviceId d : s->devices_with_segments) ids.push_back(d.value());
    out.notes.push_back(
        fmt::format("devices holding segments: {} (--device N picks one)", fmt::join(ids, ", ")));
  }
  out.recording = std::move(recording);
  return out;
}

// --at: the one replay every command runs (ScenarioRun: recorded settings,
// start state seeded through the policy's hook, recorded addresses checked),
// read through StopAt and left standing at that point.
absl::StatusOr<InspectedState> FromReplay(std::shared_ptr<const Recording> recording,
                                          const SourceOptions& o) {
  ScenarioRequest request;
  request.device = o.device;
  absl::StatusOr<Scenario> scenario = MakeScenario(recording, request);
  if (!scenario.ok()) return scenario.status();
  InspectedState out;
  out.recording = std::move(recording);
  out.source = out.recording->facts().description;
  out.scenario = std::make_unique<Scenario>(*std::move(scenario));
  const Scenario& sc = *out.scenario;
  absl::StatusOr<AllocatorConfig> config = AnalysingPolicy(*out.recording, o);
  if (!config.ok()) return config.status();
  out.settings = ApplyRecordedSettings(sc, *config);
  std::optional<Bytes> from_oom;
  if (sc.recorded_oom) from_oom = sc.recorded_oom->capacity;
  const Bytes limit = o.bytes_limit.value_or(from_oom.value_or(Bytes::Max()));
  ReplayOptions options;
  options.check_recorded = true;  // new segments take their recorded bases, as in `replay --check-recorded`
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(sc, *config, limit, options);
  if (!run.ok()) return run.status();
  out.run = *std::move(run);
  StopAt stop(out.run->reader(), *o.at);
  absl::StatusOr<ReplaySummary> summary = out.run->Run(stop);
  if (!summary.ok()) return summary.status();
  const uint64_t device = sc.device ? sc.device->value() : 0;
  if (!stop.reached()) {
    return absl::InvalidArgumentError(fmt::format("--at {}: no such {} in {} (device {}: events 0-{})", *o.at,
                                                  *o.at == "oom" ? "recorded OOM" : "event or mark", o.path,
                                                  device, stop.events() == 0 ? 0 : stop.events() - 1));
  }
  out.policy = &out.run->policy();
  out.row = config->policy;
  out.device = DeviceId(device);
  out.device_reason = sc.device_reason;
  out.where = fmt::format("after event {} ({}), replayed from the trace's rebuilt initial state",
                          stop.reached_index(), stop.location());
  out.capacity = CapacityText(o, from_oom);
  return out;
}

}  // namespace

absl::StatusOr<InspectedState> InspectRecording(std::shared_ptr<const Recording> recording,
                                                const SourceOptions& options) {
  return options.at ? FromReplay(std::move(recording), options)
                    : FromRecordedState(std::move(recording), options);
}

absl::StatusOr<InspectedState> LoadInspectedState(const SourceOptions& options) {
  absl::StatusOr<std::unique_ptr<Recording>> recording = OpenRecording(options.path);
  if (!recording.ok()) return recording.status();
  return InspectRecording(std::shared_ptr<const Recording>(*std::move(recording)), options);
}

}  // namespace hbmsim::sim::inspect
