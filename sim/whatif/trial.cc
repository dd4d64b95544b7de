#include "sim/whatif/trial.h"

#include "allocator/core/null_allocator.h"
#include "sim/layer.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim::sim {
namespace {

// Counts failures by verdict and takes the probes of TrialOptions.
class TrialObserver : public ReplayObserver {
 public:
  TrialObserver(const Allocator& policy, const TrialOptions& options, TrialResult& out)
      : policy_(policy), options_(options), out_(out) {}

  void OnAlloc(EventIndex index, const Event&, const AllocResult& r) override {
    if (options_.probe_event == index) out_.probe_stats = policy_.GetStats();
    if (options_.peak_in_use_stats && r.ok()) {
      // The stats at each new maximum: the last is the first alloc to reach
      // the highest bytes in use seen after an alloc.
      const int64_t in_use = policy_.BytesInUse();
      if (!out_.in_use_target_stats || in_use > most_in_use_) {
        most_in_use_ = in_use;
        out_.in_use_target_stats = policy_.GetStats();
      }
    }
  }
  void OnFailure(const FailureRecord& f) override { out_.Count(f); }

  // Those stats are the peak's only if that maximum is the policy's own peak.
  void Finish() {
    if (out_.in_use_target_stats && most_in_use_ < out_.final_stats.peak_bytes_in_use) {
      out_.in_use_target_stats.reset();
    }
  }

 private:
  const Allocator& policy_;
  const TrialOptions& options_;
  TrialResult& out_;
  int64_t most_in_use_ = 0;
};

// The survey's policy when it keeps a log: the null policy's placements
// (none that matter), and each buffer a number of its own, logged in place
// of its id (LoggingReader::NumberBufferIds). Numbers freed go on a stack,
// so the live buffers keep to the least numbers and a trial's table to its
// first slots.
class BufferNumbering final : public Allocator {
 public:
  explicit BufferNumbering(LoggingReader& log) : log_(log) { log_.NumberBufferIds(); }

  std::string_view name() const override { return null_.name(); }
  AllocResult Allocate(const AllocRequest& req) override {
    AllocResult r = null_.Allocate(req);
    uint64_t number = next_;
    if (free_.empty()) {
      ++next_;
    } else {
      number = free_.back();
      free_.pop_back();
    }
    r.handle = Handle(number);
    log_.NumberLast(number);  // a program's load keeps its id: it is not a buffer event
    return r;
  }
  void Free(Handle h) override { Release(h); }
  void RequestFree(Handle h) override { log_.NumberLast(h.value()); }
  void CompleteFree(Handle h) override { Release(h); }
  void ClearStats() override { null_.ClearStats(); }
  AllocatorStats GetStats() const override { return null_.GetStats(); }
  void WalkMemoryMap(MemoryMapVisitor& v) const override { null_.WalkMemoryMap(v); }
  absl::Status CheckInvariants() const override { return absl::OkStatus(); }

 private:
  void Release(Handle h) {
    log_.NumberLast(h.value());
    free_.push_back(h.value());
  }

  NullAllocator null_;
  LoggingReader& log_;
  uint64_t next_ = 0;
  std::vector<uint64_t> free_;
};

}  // namespace

void TrialResult::Count(const FailureRecord& f) {
  ++failures;
  (f.kind == AllocStatus::kOom ? oom : fragmentation)++;
  if (!first_failure) {
    first_failure = TrialFailure{f.event.value(), f.rounded, f.kind, f.free_bytes, f.largest_free_block_bytes};
  }
}

absl::StatusOr<ScenarioSurvey> SurveyScenario(const Scenario& scenario, const SurveyOptions& survey_options) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = scenario.Events();
  if (!reader.ok()) return reader.status();
  std::optional<LoggingReader> logging;
  if (survey_options.log) {
    logging.emplace(**reader, survey_options.log);
  } else if (survey_options.keep_events) {
    logging.emplace(**reader, 0);
  }
  EventReader& events = logging ? static_cast<EventReader&>(*logging) : **reader;
  // Nothing fails: the engine's own peak live bytes, over exactly the events
  // every trial replays. The null policy places nothing (the live-bytes bound gave
  // the same numbers but kept a hash map of its blocks, a tenth of the
  // survey, and the survey is what every probe waits for).
  NullAllocator null;
  std::optional<BufferNumbering> numbering;
  if (logging) numbering.emplace(*logging);
  ReplayOptions options;
  options.device = scenario.device;
  options.peak_from = scenario.start_events;
  ReplayEngine engine(numbering ? static_cast<Allocator&>(*numbering) : null, options);
  if (survey_options.observer != nullptr) engine.AddObserver(survey_options.observer);
  absl::StatusOr<ReplaySummary> s = engine.Run(events);
  if (!s.ok()) return s.status();
  if (absl::Status st = CheckReplayedSomething(scenario, *s, scenario.path()); !st.ok()) return st;
  return ScenarioSurvey{s->peak_live_bytes, s->peak_live_event, s->events_read, s->events_replayed, s->device,
                        logging ? logging->log() : nullptr};
}

absl::StatusOr<TrialTarget> MakeTrialTarget(const Scenario& scenario, const AllocatorConfig& config,
                                            const ScenarioSurvey& survey) {
  absl::StatusOr<LimitedFactory> maker = MakeAllocatorMaker(scenario, config);
  if (!maker.ok()) return maker.status();
  return TrialTarget{&scenario, config, *std::move(maker), survey};
}

absl::StatusOr<TrialResult> RunTrial(const TrialTarget& target, Bytes limit, const TrialOptions& options) {
  ReplayOptions replay;
  replay.on_oom = options.stop_at_first_failure ? OnOom::kStop : OnOom::kContinue;
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
      ScenarioRun::Prepare(*target.scenario, target.config, target.maker, limit, replay);
  if (!run.ok()) return run.status();
  TrialResult out;
  TrialObserver observer((*run)->policy(), options, out);
  (*run)->engine().AddObserver(&observer);
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  if (!summary.ok()) return summary.status();
  out.summary = *summary;
  out.final_stats = (*run)->policy().GetStats();
  observer.Finish();
  return out;
}

}  // namespace hbmsim::sim
