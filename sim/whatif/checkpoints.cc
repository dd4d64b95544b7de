#include "sim/whatif/checkpoints.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "sim/engine/log_reader.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/scenario_run.h"
#include "sim/whatif/scenario_event_log.h"

namespace hbmsim::sim {

struct SharedTrials::Checkpoint {
  uint64_t next_event = 0;  // events [0, next_event) applied
  LimitWindow window;
  std::unique_ptr<Allocator> policy;
  const LimitWindowPolicy* windows = nullptr;  // the same object
  ReplayEngine::State engine;
};

namespace {

// A limit no trace reaches: the leader's.
constexpr uint64_t kLeaderLimit = uint64_t{1} << 62;

// Marks and checkpoints fall on multiples of the stride; a multiple of the
// early leader's 4096, so every probe's marks meet the leader's.
uint64_t StrideFor(uint64_t events) { return std::max<uint64_t>(4096, events / 64 + 4095) / 4096 * 4096; }

// The policy's limit windows, as its registry row gives them (nullptr: it
// keeps none).
LimitWindowPolicy* WindowsOf(const SharedTrialSupport& support, Allocator& a) {
  return support.windows != nullptr ? support.windows(a) : nullptr;
}

// A fresh policy that narrows its window from its first event, or nullptr
// when it keeps none.
LimitWindowPolicy* TrackedWindowsOf(const SharedTrialSupport& support, Allocator& a) {
  LimitWindowPolicy* w = WindowsOf(support, a);
  return w != nullptr && w->TrackLimitWindow() ? w : nullptr;
}

// What TrialObserver keeps when no probe is asked for.
class FailureObserver : public ReplayObserver {
 public:
  explicit FailureObserver(TrialResult& out) : out_(out) {}
  bool needs_allocs_and_releases() const override { return false; }
  void OnFailure(const FailureRecord& f) override { out_.Count(f); }

 private:
  TrialResult& out_;
};

// A trial runs the engine's loop with direct calls to the policy's type
// (ReplayEngine::RunPlain) when its row offers that loop, as the policies
// that keep limit windows do (`size` replays their probes many times over);
// any other runs the same loop through the Allocator interface.
absl::StatusOr<ReplaySummary> RunFromLog(const SharedTrialSupport& support, ReplayEngine& engine, LogReader& reader,
                                         Allocator& policy) {
  if (support.plain_loop != nullptr) return support.plain_loop(engine, reader, policy);
  return engine.RunPlain(reader, policy);
}

}  // namespace

SharedTrials::~SharedTrials() { stats_.PrintSummary(log_->events.size(), tracks_.met()); }

namespace {

// Why trials of `scenario` must each read it afresh, whatever the policy.
bool ScenarioForbidsSharing(const Scenario& scenario, const AllocatorConfig& config) {
  if (config.policy->plan) return true;
  if (!scenario.start_state.empty() && scenario.start_mode == StartStateMode::kSeed && config.policy->recording.seed) {
    return true;
  }
  return scenario.recording->facts().records_side_entries;
}

// Whether the policy `maker` builds keeps limit windows (any limit tells).
bool KeepsWindows(const SharedTrialSupport& support, const LimitedFactory& maker, Bytes limit) {
  absl::StatusOr<std::unique_ptr<Allocator>> probe = maker(limit);
  return probe.ok() && TrackedWindowsOf(support, **probe) != nullptr;
}

// The policy maker of `config` when its trials on `scenario` can be shared.
std::optional<LimitedFactory> SharingMaker(const Scenario& scenario, const AllocatorConfig& config) {
  if (ScenarioForbidsSharing(scenario, config)) return std::nullopt;
  absl::StatusOr<LimitedFactory> maker = MakeAllocatorMaker(scenario, config);
  if (!maker.ok() || !KeepsWindows(config.policy->shared_trials, *maker, Bytes(uint64_t{1} << 30))) return std::nullopt;
  return *std::move(maker);
}

}  // namespace

bool SharedTrials::MayShare(const Scenario& scenario, const AllocatorConfig& config) {
  return !ScenarioForbidsSharing(scenario, config) && MakeAllocatorMaker(scenario, config).ok();
}

std::unique_ptr<SharedTrials> SharedTrials::Make(const TrialTarget& target) {
  const Scenario& scenario = *target.scenario;
  if (ScenarioForbidsSharing(scenario, target.config)) return nullptr;
  std::shared_ptr<const EventLog> log =
      target.survey.events ? target.survey.events : ReadEventLog(scenario, target.survey.events_read);
  if (!log) return nullptr;
  std::unique_ptr<SharedTrials> shared(new SharedTrials(scenario, target.maker, target.config.policy->shared_trials, std::move(log)));
  shared->target_ = &target;
  shared->stride_ = StrideFor(shared->log_->events.size());
  shared->resumes_ = KeepsWindows(shared->support_, target.maker, target.survey.peak_live_bytes);
  if (!shared->resumes_) return shared;
  // The leader: checkpoints for every limit above what each prefix needs.
  absl::StatusOr<TrialResult> leader = shared->RunShared(Bytes(kLeaderLimit), TrialOptions{});
  if (!leader.ok()) return nullptr;
  return shared;
}

absl::StatusOr<TrialResult> SharedTrials::Run(Bytes limit, const TrialOptions& options) {
  return SharedOrOwn(limit, options, From::kBestCheckpoint);
}

absl::StatusOr<TrialResult> SharedTrials::SharedOrOwn(Bytes limit, const TrialOptions& options, From from_where) {
  if (!options.probe_event && !options.peak_in_use_stats) {
    absl::StatusOr<TrialResult> r = RunShared(limit, options, from_where);
    if (r.ok() || absl::IsCancelled(r.status())) return r;
  }
  return RunTrial(*target_, limit, options);  // the same answer, or the error with its file:line
}

// A trial's policy at `limit`: a clone of the checkpoint's, or a fresh one.
absl::StatusOr<std::unique_ptr<Allocator>> SharedTrials::PolicyFrom(const Checkpoint* from, Bytes limit) const {
  if (from != nullptr) return from->windows->CloneAt(limit);
  return maker_(limit);
}

ReplayOptions SharedTrials::TrialReplayOptions(const TrialOptions& options) const {
  ReplayOptions replay;
  replay.on_oom = options.stop_at_first_failure ? OnOom::kStop : OnOom::kContinue;
  replay.device = scenario_.device;
  replay.peak_from = scenario_.start_events;
  replay.numbered_ids = log_->ids_numbered;
  return replay;
}

// What a trial does at each multiple of the stride: meets a finished trial's
// mark (and stops), or takes a checkpoint for the trials after it until its
// first failure. The early leader's checkpoints come every stride events at
// first, then twice as far apart after every 64, however long the trace.
struct SharedTrials::StridePoint {
  SharedTrials& shared;
  Bytes limit;
  From from_where;
  uint64_t start;
  LimitWindowPolicy* windows;  // nullptr: no checkpoints
  const ReplayEngine& engine;
  const TrialResult& out;
  std::optional<TrialMarker>& marker;
  uint64_t every = shared.stride_;
  uint64_t taken = 0;

  // Whether the trial reads on from event i.
  bool operator()(uint64_t i) {
    if (marker && !marker->AtPoint(i)) return false;
    if (windows == nullptr || i == start || out.failures != 0 || i % every != 0) return true;
    if (from_where == From::kGrowingLog && ++taken % 64 == 0) every *= 2;
    auto c = std::make_shared<Checkpoint>();
    c->next_event = i;
    c->window = windows->limit_window();
    c->policy = windows->CloneAt(limit);
    c->windows = WindowsOf(shared.support_, *c->policy);
    c->engine = engine.SaveState();
    shared.Add(std::move(c));
    return true;
  }
};

absl::StatusOr<TrialResult> SharedTrials::RunShared(Bytes limit, const TrialOptions& options, From from_where) {
  const std::shared_ptr<const Checkpoint> from = from_where == From::kBestCheckpoint ? Best(limit) : nullptr;
  absl::StatusOr<std::unique_ptr<Allocator>> policy = PolicyFrom(from.get(), limit);
  if (!policy.ok()) return policy.status();
  // Without windows (!resumes_) a trial only reads the log: no checkpoint, no mark.
  LimitWindowPolicy* windows = from       ? WindowsOf(support_, **policy)
                               : resumes_ ? TrackedWindowsOf(support_, **policy)
                                          : nullptr;
  if (windows == nullptr && resumes_) return absl::InternalError("a policy without limit windows");
  ReplayEngine engine(**policy, TrialReplayOptions(options));
  const TrialSpan begun{limit, from ? from->next_event : 0, 0, SharedTrialsStats::MsSinceStart()};
  if (from) engine.RestoreState(from->engine);
  TrialResult out;
  FailureObserver observer(out);
  engine.AddObserver(&observer);
  // Marks for the trials after it (sim/whatif/reconvergence.h); a probe that
  // needs only its verdict stops where it meets a finished trial.
  std::optional<TrialMarker> marker;
  if (windows != nullptr && options.stop_at_first_failure) {
    marker.emplace(*windows, tracks_, limit, options.verdict_only, begun.start, stride_);
  }
  LogReader reader(*log_, begun.start, stride_, options.cancel,
                   StridePoint{*this, limit, from_where, begun.start, windows, engine, out, marker});
  absl::StatusOr<ReplaySummary> summary = RunFromLog(support_, engine, reader, **policy);
  if (!summary.ok()) {
    if (absl::IsCancelled(summary.status())) CountCalledOff(begun, engine.summary().events_read);
    return summary.status();
  }
  out.summary = *summary;
  out.final_stats = (*policy)->GetStats();
  FinishMarks(marker, out);
  std::lock_guard<std::mutex> lock(mu_);
  TrialSpan span = begun;
  span.end = summary->events_read;
  stats_.Finished(span, {from != nullptr, out.failures != 0, out.met,
                         windows != nullptr ? windows->limit_window() : LimitWindow{}});
  return out;
}

void SharedTrials::CountCalledOff(TrialSpan span, uint64_t events_read) {
  std::lock_guard<std::mutex> lock(mu_);
  span.end = events_read;
  stats_.CalledOff(span);
}

// A verdict-only trial that met a finished one has its answer; any other
// trial that kept marks leaves them for the trials after it.
void SharedTrials::FinishMarks(std::optional<TrialMarker>& marker, TrialResult& out) {
  if (marker && marker->met()) {
    out.failures = *marker->met() ? 0 : 1;  // it would have stopped at its first
    out.met = true;
  } else if (marker) {
    tracks_.Add(marker->Finish(out.ok()));
  }
}

std::shared_ptr<const SharedTrials::Checkpoint> SharedTrials::Best(Bytes limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const Checkpoint> best;
  for (const std::shared_ptr<const Checkpoint>& c : checkpoints_) {
    if (c->window.Contains(limit) && (!best || c->next_event > best->next_event)) best = c;
  }
  return best;
}

uint64_t SharedTrials::ResumeEvent(Bytes limit) const {
  const std::shared_ptr<const Checkpoint> from = Best(limit);
  return from ? from->next_event : 0;
}

void SharedTrials::Add(std::shared_ptr<const Checkpoint> c) {
  std::lock_guard<std::mutex> lock(mu_);
  // One at the same event whose window holds this one's is as good.
  for (const std::shared_ptr<const Checkpoint>& o : checkpoints_) {
    if (o->next_event == c->next_event && o->window.lo <= c->window.lo && c->window.hi <= o->window.hi) return;
  }
  // Those at earlier events with the same window are no use any more.
  std::erase_if(checkpoints_, [&](const std::shared_ptr<const Checkpoint>& o) {
    return o->next_event < c->next_event && o->window == c->window;
  });
  if (checkpoints_.size() >= kMaxCheckpoints) checkpoints_.erase(checkpoints_.begin());  // the oldest
  checkpoints_.push_back(std::move(c));
}

void SharedTrials::KeepFor(Bytes lo, Bytes hi) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(checkpoints_, [&](const std::shared_ptr<const Checkpoint>& c) {
    return c->window.hi < lo || c->window.lo > hi;
  });
}

std::unique_ptr<EarlyLeader> EarlyLeader::Start(const Scenario& scenario, const AllocatorConfig& config) {
  if (std::thread::hardware_concurrency() < 2) return nullptr;
  std::optional<LimitedFactory> maker = SharingMaker(scenario, config);
  if (!maker) return nullptr;
  std::unique_ptr<EarlyLeader> early(new EarlyLeader());
  early->log_ = NewGrowingLog();
  if (!early->log_) return nullptr;
  early->log_->ids_numbered = true;  // the survey that fills it numbers the buffers (SurveyScenario)
  early->shared_.reset(new SharedTrials(scenario, *std::move(maker), config.policy->shared_trials, early->log_));
  early->shared_->stride_ = 4096;  // the least; the leader thins its checkpoints out as it goes
  early->thread_ = std::thread([e = early.get()] {
    e->leader_ = e->shared_->RunShared(Bytes(kLeaderLimit), TrialOptions{}, SharedTrials::From::kGrowingLog).status();
  });
  return early;
}

EarlyLeader::~EarlyLeader() { Join(); }

void EarlyLeader::Join() {
  if (!thread_.joinable()) return;
  // The survey is done: a log it never completed will not grow any more.
  EventLog::Growth growing = EventLog::Growth::kGrowing;
  log_->growth.compare_exchange_strong(growing, EventLog::Growth::kDropped, std::memory_order_acq_rel);
  thread_.join();
}

std::unique_ptr<SharedTrials> EarlyLeader::Finish(const TrialTarget& target) {
  Join();
  if (!leader_.ok() || target.survey.events != log_ ||
      log_->growth.load(std::memory_order_acquire) != EventLog::Growth::kComplete) {
    return nullptr;
  }
  shared_->target_ = &target;
  shared_->stride_ = StrideFor(log_->events.size());
  return std::move(shared_);
}

uint64_t SharedTrials::trials() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.trials();
}
uint64_t SharedTrials::resumed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.resumed();
}
uint64_t SharedTrials::events_replayed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.events_replayed();
}

}  // namespace hbmsim::sim
