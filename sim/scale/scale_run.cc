#include "sim/scale/scale_run.h"

#include "fmt/format.h"
#include "sim/engine/replay_observer.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim::scale {
namespace {

// Counts the trace's allocations (the start state's blocks are not its
// calls) and the failures by verdict, and names the first failure's frame.
class FailureWatch : public ReplayObserver {
 public:
  explicit FailureWatch(const EventReader& events) : events_(events) {}
  void OnAlloc(EventIndex, const Event& e, const AllocResult&) override {
    if (e.tag != kStartStateTag) ++allocations_;
  }
  void OnFailure(const FailureRecord& f) override {
    ++failures_;
    (f.kind == AllocStatus::kOom ? oom_ : fragmentation_) += 1;
    if (first_) return;
    first_ = ScaleFailure{f.kind, f.event.value(), f.requested,
                          CallFrame(events_.context_table(), events_.context().frames)};
  }
  void Into(ScaleRunResult& r) const {
    r.allocations = allocations_;
    r.failures = failures_;
    r.oom = oom_;
    r.fragmentation = fragmentation_;
    r.first_failure = first_;
  }

 private:
  const EventReader& events_;
  uint64_t allocations_ = 0, failures_ = 0, oom_ = 0, fragmentation_ = 0;
  std::optional<ScaleFailure> first_;
};

}  // namespace

namespace {

// The first frame naming `prefix`, from the prefix up to the first of `ends`.
std::string FirstNamed(const ContextTable& table, uint32_t frames, std::string_view prefix,
                       std::string_view ends) {
  for (uint32_t id : table.list(frames)) {
    const std::string& name = table.frame(id).name;
    const size_t at = name.find(prefix);
    if (at == std::string::npos) continue;
    const size_t end = name.find_first_of(ends, at + prefix.size());
    return name.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return "";
}

// The autograd node whose apply() made the call: "DivBackward0".
std::string AutogradNode(const ContextTable& table, uint32_t frames) {
  constexpr std::string_view kPrefix = "torch::autograd::generated::";
  for (uint32_t id : table.list(frames)) {
    const std::string& name = table.frame(id).name;
    const size_t at = name.find(kPrefix);
    const size_t apply = name.find("::apply(");
    if (at == std::string::npos || apply == std::string::npos || apply < at) continue;
    return name.substr(at + kPrefix.size(), apply - at - kPrefix.size());
  }
  return "";
}

}  // namespace

std::string CallFrame(const ContextTable* table, uint32_t frames) {
  if (std::string user = TopUserFrame(table, frames); !user.empty() || table == nullptr) return user;
  std::string kernel = FirstNamed(*table, frames, "at::native::", "<(");
  if (kernel.empty()) kernel = FirstNamed(*table, frames, "at::_ops::", ":<(");
  const std::string node = AutogradNode(*table, frames);
  if (node.empty()) return kernel;
  return kernel.empty() ? node : fmt::format("{} in {}", kernel, node);
}

std::string_view ScaleRunResult::Verdict() const {
  if (!first_failure) return "fits";
  return first_failure->kind == AllocStatus::kOom ? "oom" : "fragmentation";
}

absl::StatusOr<ScaleRunResult> RunForScale(const Scenario& scenario, const AllocatorConfig& config,
                                           Bytes limit, const ScaleRunOptions& options) {
  ReplayOptions replay;
  replay.on_oom = options.stop_at_first_failure ? OnOom::kStop : OnOom::kContinue;
  replay.peak_from = scenario.start_events;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(scenario, config, limit, replay);
  if (!run.ok()) return run.status();
  ReplayEngine& engine = (*run)->engine();
  FailureWatch failures((*run)->reader());
  engine.AddObserver(&failures);
  std::optional<MemoryAttribution> attribution;
  if (options.attribute) {
    attribution.emplace(/*top_buffers=*/10, TopUserFrames((*run)->reader()));
    engine.AddObserver(&*attribution);
  }
  EventReader& reader = options.viz != nullptr
                            ? options.viz->Attach((*run)->driven(), replay, engine, (*run)->reader())
                            : (*run)->reader();
  absl::StatusOr<ReplaySummary> summary = (*run)->Run(reader);
  if (!summary.ok()) return summary.status();
  if (options.viz != nullptr) {
    ReplayReportInput report;
    report.bytes_limit = limit;
    report.config = &config;
    report.allocator = &(*run)->policy();
    report.summary = &*summary;
    report.options = replay;
    if (absl::Status s = options.viz->Write(report, *options.outputs); !s.ok()) return s;
  }
  const AllocatorStats stats = (*run)->policy().GetStats();
  ScaleRunResult out;
  out.limit = limit;
  out.peak_allocated = Bytes(static_cast<uint64_t>(stats.peak_bytes_in_use));
  out.peak_reserved = Bytes(static_cast<uint64_t>(stats.peak_pool_bytes.value_or(stats.peak_bytes_reserved)));
  failures.Into(out);
  if (attribution) out.at_peak = attribution->AtPeak();
  return out;
}

}  // namespace hbmsim::sim::scale
