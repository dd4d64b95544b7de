#include "sim/whatif/recording_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/peak_walk.h"
#include "sim/scenario/scenario_run.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using DiffJson = nlohmann::ordered_json;

std::string DiffHuman(int64_t bytes) { return HumanReadableNumBytes(Bytes(static_cast<uint64_t>(std::llabs(bytes)))); }

std::string DiffSigned(int64_t bytes) { return fmt::format("{:+} ({}{})", bytes, bytes < 0 ? "-" : "+", DiffHuman(bytes)); }

// The next event of the scenario's device, as the divergence list shows it.
class DeviceStream {
 public:
  static absl::StatusOr<DeviceStream> Open(const Scenario& s) {
    absl::StatusOr<std::unique_ptr<EventReader>> reader = s.Events();
    if (!reader.ok()) return reader.status();
    return DeviceStream(*std::move(reader), s.device, s.start_events);
  }
  // Unset at the end; an error is the reader's (file:line).
  absl::StatusOr<std::optional<StreamEvent>> Next() {
    Event e;
    while (true) {
      absl::StatusOr<bool> more = reader_->Next(e);
      if (!more.ok()) return more.status();
      if (!*more) return std::optional<StreamEvent>();
      const uint64_t index = read_++;
      if (device_ && e.device != *device_) continue;
      // The state the recording began in is not what the job did: its
      // blocks' order says nothing about where two runs part.
      if (index < start_events_ || (e.kind == EventKind::kAlloc && e.tag == kStartStateTag)) continue;
      StreamEvent out{index, std::string(EventKindName(e.kind)), 0, ""};
      if (e.kind == EventKind::kAlloc || e.kind == EventKind::kProgramLoad) out.bytes = e.bytes.value();
      if (frames_) out.label = frames_(e);
      if (out.label.empty()) out.label = std::string(e.tag);
      return std::optional<StreamEvent>(std::move(out));
    }
  }

 private:
  DeviceStream(std::unique_ptr<EventReader> reader, std::optional<DeviceId> device, uint64_t start_events)
      : reader_(std::move(reader)), device_(device), start_events_(start_events), frames_(TopUserFrames(*reader_)) {}

  std::unique_ptr<EventReader> reader_;
  std::optional<DeviceId> device_;
  uint64_t start_events_ = 0;  // Scenario::start_events: they only rebuild the start state
  std::function<std::string(const Event&)> frames_;
  uint64_t read_ = 0;
};

bool Same(const StreamEvent& a, const StreamEvent& b) { return a.kind == b.kind && a.bytes == b.bytes; }

std::string EventText(const std::optional<StreamEvent>& e) {
  if (!e) return "(the stream has ended)";
  std::string out = fmt::format("event {} {}", e->index, e->kind);
  if (e->bytes > 0) out += fmt::format(" {} B ({})", e->bytes, DiffHuman(static_cast<int64_t>(e->bytes)));
  if (!e->label.empty()) out += fmt::format("  {}", e->label);
  return out;
}

DiffJson EventJson(const std::optional<StreamEvent>& e) {
  if (!e) return DiffJson(nullptr);
  return DiffJson{{"event", e->index}, {"kind", e->kind}, {"bytes", e->bytes}, {"label", e->label}};
}

void PeakLine(std::string& out, std::string_view name, int64_t a, int64_t b) {
  out += fmt::format("  {:<16} {:>16} {:>10} {:>16} {:>10} {:>28}\n", name, a, DiffHuman(a), b, DiffHuman(b), DiffSigned(b - a));
}

std::string DeltaName(const ReservedDelta& d) { return d.key.empty() ? d.cause : fmt::format("{}  {}", d.cause, d.key); }

void ReservedSection(const RecordingPeaks& a, const RecordingPeaks& b, size_t rows, std::string& out) {
  if (!a.reserved_at_peak || !b.reserved_at_peak) return;
  const ReservedMoment &ma = *a.reserved_at_peak, &mb = *b.reserved_at_peak;
  out += fmt::format(
      "\nReserved at each peak of reserved, explained (baseline event {}, candidate event {}), largest change "
      "first:\n  {:>16} {:>10} {:>16} {:>10} {:>28}  part\n",
      ma.event.value(), mb.event.value(), "baseline", "", "candidate", "", "change");
  const std::vector<ReservedDelta> deltas = ReservedDeltas(ma, mb);
  int64_t rest_a = 0, rest_b = 0;
  for (size_t i = 0; i < deltas.size(); ++i) {
    const ReservedDelta& d = deltas[i];
    if (i >= rows && deltas.size() > rows + 1) {
      rest_a += d.baseline;
      rest_b += d.candidate;
      continue;
    }
    out += fmt::format("  {:>16} {:>10} {:>16} {:>10} {:>28}  {}\n", d.baseline, DiffHuman(d.baseline), d.candidate,
                       DiffHuman(d.candidate), DiffSigned(d.delta()), DeltaName(d));
  }
  if (deltas.size() > rows + 1) {
    out += fmt::format("  {:>16} {:>10} {:>16} {:>10} {:>28}  ({} more parts)\n", rest_a, DiffHuman(rest_a), rest_b,
                       DiffHuman(rest_b), DiffSigned(rest_b - rest_a), deltas.size() - rows);
  }
  const auto ra = static_cast<int64_t>(ma.reserved.value()), rb = static_cast<int64_t>(mb.reserved.value());
  out += fmt::format("  {:>16} {:>10} {:>16} {:>10} {:>28}  reserved\n", ra, DiffHuman(ra), rb, DiffHuman(rb), DiffSigned(rb - ra));
}

void DivergenceSection(const DivergenceList& d, std::string& out) {
  if (d.first.empty()) {
    out += fmt::format("\nThe two streams do not diverge: {} events, the same kind and bytes at each position\n",
                       d.compared);
    return;
  }
  out += fmt::format("\nWhere the two diverge first ({} of {} positions differ in kind or bytes):\n", d.differing,
                     d.compared);
  for (const Divergence& x : d.first) {
    out += fmt::format("  position {}\n    baseline:  {}\n    candidate: {}\n", x.position, EventText(x.baseline),
                       EventText(x.candidate));
  }
}

}  // namespace

absl::StatusOr<RecordingPeaks> ReplayPeaks(const Scenario& scenario, const AllocatorConfig& config, Bytes limit) {
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(scenario, config, limit, ReplayOptions{});
  if (!run.ok()) return run.status();
  ReservedExplainer explainer((*run)->policy(), TopUserFrames((*run)->reader()));
  (*run)->engine().AddObserver(&explainer);
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  if (!summary.ok()) return summary.status();
  explainer.Finish(EventIndex(summary->events_read > 0 ? summary->events_read - 1 : 0));
  if (absl::Status s = WalkPassedOverPeak(scenario, config, limit, ReplayOptions{}, explainer); !s.ok()) return s;
  const AllocatorStats stats = (*run)->policy().GetStats();
  RecordingPeaks out;
  out.peak_allocated = stats.peak_bytes_in_use;
  out.peak_live = summary->peak_live_bytes.value();
  out.failures = summary->failures;
  out.reserved_at_peak = explainer.peak();
  // The policy's own peak of its pool, as `replay` reports it; a policy
  // without a pool (a TPU's whole HBM) holds what its walk says.
  const int64_t walked = explainer.peak() ? static_cast<int64_t>(explainer.peak()->reserved.value()) : 0;
  out.peak_reserved = stats.peak_pool_bytes.value_or(walked);
  return out;
}

absl::StatusOr<DivergenceList> FirstDivergences(const Scenario& baseline, const Scenario& candidate, size_t keep) {
  absl::StatusOr<DeviceStream> a = DeviceStream::Open(baseline);
  if (!a.ok()) return a.status();
  absl::StatusOr<DeviceStream> b = DeviceStream::Open(candidate);
  if (!b.ok()) return b.status();
  DivergenceList out;
  for (uint64_t position = 0;; ++position) {
    absl::StatusOr<std::optional<StreamEvent>> ea = a->Next();
    if (!ea.ok()) return ea.status();
    absl::StatusOr<std::optional<StreamEvent>> eb = b->Next();
    if (!eb.ok()) return eb.status();
    if (!*ea && !*eb) break;
    ++out.compared;
    if (*ea && *eb && Same(**ea, **eb)) continue;
    ++out.differing;
    if (out.first.size() < keep) out.first.push_back({position, *std::move(ea), *std::move(eb)});
  }
  return out;
}

std::vector<ReservedDelta> ReservedDeltas(const ReservedMoment& baseline, const ReservedMoment& candidate) {
  std::map<std::pair<std::string, std::string>, ReservedDelta> by_part;  // ordered: ties by (cause, key)
  for (const ReservedPart& p : baseline.parts) {
    ReservedDelta& d = by_part[{p.cause, p.key}];
    d.cause = p.cause;
    d.key = p.key;
    d.baseline += static_cast<int64_t>(p.bytes.value());
  }
  for (const ReservedPart& p : candidate.parts) {
    ReservedDelta& d = by_part[{p.cause, p.key}];
    d.cause = p.cause;
    d.key = p.key;
    d.candidate += static_cast<int64_t>(p.bytes.value());
  }
  std::vector<ReservedDelta> out;
  for (auto& [key, d] : by_part) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(), [](const ReservedDelta& x, const ReservedDelta& y) {
    return std::llabs(x.delta()) > std::llabs(y.delta());
  });
  return out;
}

std::string RecordingDiffText(const RecordingPeaks& a, const RecordingPeaks& b, const DivergenceList& d, size_t rows) {
  std::string out = fmt::format("\nPeaks of the two replays (as `hbmsim replay` reports them):\n  {:<16} {:>27} {:>27} {:>28}\n",
                                "", "baseline", "candidate", "change");
  PeakLine(out, "peak allocated", a.peak_allocated, b.peak_allocated);
  PeakLine(out, "peak reserved", a.peak_reserved, b.peak_reserved);
  PeakLine(out, "peak live", static_cast<int64_t>(a.peak_live), static_cast<int64_t>(b.peak_live));
  ReservedSection(a, b, rows, out);
  DivergenceSection(d, out);
  return out;
}

DiffJson RecordingDiffJson(const RecordingPeaks& a, const RecordingPeaks& b, const DivergenceList& d) {
  auto side = [](int64_t x, int64_t y) { return DiffJson{{"baseline", x}, {"candidate", y}, {"delta", y - x}}; };
  DiffJson j;
  j["peaks"] = DiffJson{{"allocated", side(a.peak_allocated, b.peak_allocated)},
                    {"reserved", side(a.peak_reserved, b.peak_reserved)},
                    {"live", side(static_cast<int64_t>(a.peak_live), static_cast<int64_t>(b.peak_live))}};
  DiffJson reserved(nullptr);
  if (a.reserved_at_peak && b.reserved_at_peak) {
    DiffJson parts = DiffJson::array();
    for (const ReservedDelta& x : ReservedDeltas(*a.reserved_at_peak, *b.reserved_at_peak)) {
      DiffJson p{{"cause", x.cause}};
      if (!x.key.empty()) p["key"] = x.key;
      p["baseline"] = x.baseline;
      p["candidate"] = x.candidate;
      p["delta"] = x.delta();
      parts.push_back(std::move(p));
    }
    reserved = DiffJson{{"baseline", ReservedMomentJson(*a.reserved_at_peak)},
                    {"candidate", ReservedMomentJson(*b.reserved_at_peak)},
                    {"parts", std::move(parts)}};
  }
  j["reserved_explained"] = std::move(reserved);
  DiffJson first = DiffJson::array();
  for (const Divergence& x : d.first) {
    first.push_back(DiffJson{{"position", x.position}, {"baseline", EventJson(x.baseline)}, {"candidate", EventJson(x.candidate)}});
  }
  j["divergence"] = DiffJson{{"compared", d.compared}, {"differing", d.differing}, {"first", std::move(first)}};
  return j;
}

}  // namespace hbmsim::sim
