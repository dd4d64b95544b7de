#include "sim/whatif/checkpoints.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>

#include "allocator/bfc/bfc_allocator.h"
#include "allocator/cuda_async/cuda_async_allocator.h"
#include "allocator/torch/torch_allocator.h"
#include "fmt/format.h"
#include "sim/engine/replay_engine.h"
#include "sim/scenario/scenario_run.h"

namespace hbmsim {

struct SharedTrials::Checkpoint {
  uint64_t next_event = 0;  // events [0, next_event) applied
  LimitWindow window;
  std::unique_ptr<Allocator> policy;
  const LimitWindowPolicy* windows = nullptr;  // the same object
  ReplayEngine::State engine;
};

namespace {

// When the program started, near enough (static initialisation): the trials'
// timeline under HBMSIM_SHARED_TRIALS_STATS counts from it.
const auto kStartTime = std::chrono::steady_clock::now();

double MsSinceStart() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kStartTime).count();
}

// A limit no trace reaches: the leader's.
constexpr uint64_t kLeaderLimit = uint64_t{1} << 62;

LimitWindowPolicy* WindowsOf(Allocator& a) { return dynamic_cast<LimitWindowPolicy*>(&a); }

// Marks and checkpoints fall on multiples of the stride; a multiple of the
// early leader's 4096, so every probe's marks meet the leader's.
uint64_t StrideFor(uint64_t events) { return std::max<uint64_t>(4096, events / 64 + 4095) / 4096 * 4096; }

// A fresh policy that narrows its window from its first event, or nullptr
// when it keeps none.
LimitWindowPolicy* TrackedWindowsOf(Allocator& a) {
  auto* w = dynamic_cast<LimitWindowPolicy*>(&a);
  return w != nullptr && w->TrackLimitWindow() ? w : nullptr;
}

// The captured events, from `next`; `before(i)` runs before event i is read
// for every i that is a multiple of `stride`, when every earlier event has
// been applied, and ends the reading early by returning false. A log still
// growing is read as far as it is published, waiting for more until it is
// complete (or dropped: an error).
class LogReader : public EventReader {
 public:
  LogReader(const EventLog& log, uint64_t next, uint64_t stride, const std::atomic<bool>* cancel,
            std::function<bool(uint64_t)> before)
      : log_(log), records_(log.record_data()), wide_(log.wide_data()), lanes_(log.lanes.get()),
        end_(log.published.load(std::memory_order_acquire)), next_(next),
        next_mark_((next + stride - 1) / stride * stride), stride_(stride), cancel_(cancel),
        before_(std::move(before)) {}

  absl::StatusOr<bool> Next(Event& e) override {
    PlainEvent p;
    absl::Status stop;
    if (!NextPlain(p, stop)) {
      if (!stop.ok()) return stop;
      return false;
    }
    // A logged event has no attributes: clear them only if the caller's
    // Event holds some (the engine passes the same one every time, and a
    // whole-struct reset was a tenth of a probe's time).
    if (e.time_us || e.addr || e.shape || !e.tag.empty() || !e.label.empty() || !e.attrs.empty()) e = Event{};
    CopyPlain(p, e);
    return true;
  }
  // ReplayEngine::RunPlain's reader: Next without the Event.
  [[gnu::always_inline]] bool NextPlain(PlainEvent& p, absl::Status& stop) {
    if (next_ >= end_ || next_ == next_mark_) [[unlikely]] {
      if (!AtBoundary(stop)) return false;
    }
    const LoggedEvent l = records_[next_++];
    if (l.escaped()) [[unlikely]] {
      Wide(wide_[l.wide_index()], p);
      return true;
    }
    const EventLane& lane = lanes_[l.lane()];
    p.kind = l.kind();
    p.id = l.id();
    p.bytes = Bytes(l.bytes());
    p.device = DeviceId(lane.device);
    p.stream = StreamId(lane.stream);
    return true;
  }
  // Only a complete log has its metadata (a trial reads it once done).
  const TraceMetadata& metadata() const override { return log_.metadata; }
  std::string Location() const override { return fmt::format("event {}", next_ - 1); }

 private:
  [[gnu::noinline]] void Wide(const WideEvent& w, PlainEvent& p) const {
    p.kind = w.kind;
    p.id = w.id;
    p.bytes = Bytes(w.bytes);
    p.device = DeviceId(lanes_[w.lane].device);
    p.stream = StreamId(lanes_[w.lane].stream);
  }
  // At the end of what is published, or at a mark: whether event next_ is
  // to be read (else `stop` says why not, or nothing for the end).
  [[gnu::noinline]] bool AtBoundary(absl::Status& stop) {
    if (next_ >= end_) {
      absl::StatusOr<bool> more = AwaitMore();
      if (!more.ok()) stop = more.status();
      if (!more.ok() || !*more) return false;
    }
    if (next_ != next_mark_) return true;
    next_mark_ += stride_;  // a division per event was a tenth of this function
    // Called off, unless at most a stride is left: less than a resumed run
    // would replay again from the last checkpoint (of a complete log: only
    // the early leader reads a growing one, and it is never called off).
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed) && end_ - next_ > stride_) {
      stop = absl::CancelledError("trial cancelled");
      return false;
    }
    return before_(next_);
  }

  // Whether event next_ is (or will be) there; waits while the log grows.
  absl::StatusOr<bool> AwaitMore() {
    for (int spins = 0;; ++spins) {
      // Growth before published: kComplete is stored after the last publish.
      const EventLog::Growth growth = log_.growth.load(std::memory_order_acquire);
      end_ = log_.published.load(std::memory_order_acquire);
      if (next_ < end_) return true;
      if (growth == EventLog::Growth::kComplete) return false;
      if (growth == EventLog::Growth::kDropped) return absl::CancelledError("the event log was dropped");
      // The parse ahead is a little slower than a replay: a short wait.
      if (spins < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  const EventLog& log_;
  const LoggedEvent* records_;
  const WideEvent* wide_;
  const EventLane* lanes_;
  uint64_t end_;  // events [0, end_) are there to read
  uint64_t next_;
  uint64_t next_mark_;  // the least multiple of stride_ >= next_ not yet passed
  const uint64_t stride_;
  const std::atomic<bool>* cancel_;  // may be nullptr
  std::function<bool(uint64_t)> before_;
};

// What TrialObserver keeps when no probe is asked for.
class FailureObserver : public ReplayObserver {
 public:
  explicit FailureObserver(TrialResult& out) : out_(out) {}
  bool needs_allocs_and_releases() const override { return false; }
  void OnFailure(const FailureRecord& f) override { out_.Count(f); }

 private:
  TrialResult& out_;
};

// The policies whose trials run the engine's loop with direct calls
// (ReplayEngine::RunPlain): the ones that keep limit windows, whose probes
// `size` replays many times over. Any other policy runs the same loop
// through the Allocator interface.
template <typename P>
absl::StatusOr<ReplaySummary> RunAs(ReplayEngine& engine, LogReader& reader, Allocator& policy) {
  return engine.RunPlain(reader, static_cast<P&>(policy));
}
struct DirectLoop {
  const std::type_info& type;
  absl::StatusOr<ReplaySummary> (*run)(ReplayEngine&, LogReader&, Allocator&);
};
const DirectLoop kDirectLoops[] = {
    {typeid(BfcAllocator), &RunAs<BfcAllocator>},
    {typeid(torch::TorchAllocator), &RunAs<torch::TorchAllocator>},
    {typeid(CudaAsyncAllocator), &RunAs<CudaAsyncAllocator>},
};

absl::StatusOr<ReplaySummary> RunFromLog(ReplayEngine& engine, LogReader& reader, Allocator& policy) {
  for (const DirectLoop& row : kDirectLoops) {
    if (typeid(policy) == row.type) return row.run(engine, reader, policy);
  }
  return RunAs<Allocator>(engine, reader, policy);
}

}  // namespace

SharedTrials::~SharedTrials() {
  // What the sharing saved, for measuring it (docs/what-if.md "Cost").
  if (std::getenv("HBMSIM_SHARED_TRIALS_STATS") != nullptr) {
    std::fprintf(stderr,
                 "shared trials: %llu events, %llu trials (%llu resumed, %llu met a finished one), %llu events replayed "
                 "(%.2f full replays), %llu more by trials called off\n",
                 static_cast<unsigned long long>(log_->events.size()), static_cast<unsigned long long>(trials_),
                 static_cast<unsigned long long>(resumed_), static_cast<unsigned long long>(tracks_.met()),
                 static_cast<unsigned long long>(events_replayed_),
                 log_->events.empty() ? 0.0
                                      : static_cast<double>(events_replayed_) / static_cast<double>(log_->events.size()),
                 static_cast<unsigned long long>(events_called_off_));
  }
}

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
bool KeepsWindows(const LimitedFactory& maker, Bytes limit) {
  absl::StatusOr<std::unique_ptr<Allocator>> probe = maker(limit);
  return probe.ok() && TrackedWindowsOf(**probe) != nullptr;
}

// The policy maker of `config` when its trials on `scenario` can be shared.
std::optional<LimitedFactory> SharingMaker(const Scenario& scenario, const AllocatorConfig& config) {
  if (ScenarioForbidsSharing(scenario, config)) return std::nullopt;
  absl::StatusOr<LimitedFactory> maker = MakeAllocatorMaker(scenario, config);
  if (!maker.ok() || !KeepsWindows(*maker, Bytes(uint64_t{1} << 30))) return std::nullopt;
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
  std::unique_ptr<SharedTrials> shared(new SharedTrials(scenario, target.maker, std::move(log)));
  shared->target_ = &target;
  shared->stride_ = StrideFor(shared->log_->events.size());
  shared->resumes_ = KeepsWindows(target.maker, target.survey.peak_live_bytes);
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

absl::StatusOr<TrialResult> SharedTrials::RunShared(Bytes limit, const TrialOptions& options, From from_where) {
  const std::shared_ptr<const Checkpoint> from = from_where == From::kBestCheckpoint ? Best(limit) : nullptr;
  std::unique_ptr<Allocator> policy;
  if (from) {
    policy = from->windows->CloneAt(limit);
  } else {
    absl::StatusOr<std::unique_ptr<Allocator>> built = maker_(limit);
    if (!built.ok()) return built.status();
    policy = *std::move(built);
  }
  // Without windows (!resumes_) a trial only reads the log: no checkpoint, no mark.
  LimitWindowPolicy* windows = from ? WindowsOf(*policy) : resumes_ ? TrackedWindowsOf(*policy) : nullptr;
  if (windows == nullptr && resumes_) return absl::InternalError("a policy without limit windows");
  ReplayOptions replay;
  replay.on_oom = options.stop_at_first_failure ? OnOom::kStop : OnOom::kContinue;
  replay.device = scenario_.device;
  replay.peak_from = scenario_.start_events;
  replay.numbered_ids = log_->ids_numbered;
  ReplayEngine engine(*policy, replay);
  const uint64_t start = from ? from->next_event : 0;
  const double began_ms = MsSinceStart();
  if (from) engine.RestoreState(from->engine);
  TrialResult out;
  FailureObserver observer(out);
  engine.AddObserver(&observer);
  // The early leader's checkpoints: every stride_ events at first, then
  // twice as far apart after every 64, however long the trace turns out.
  uint64_t every = stride_;
  uint64_t taken = 0;
  // Marks for the trials after it (sim/whatif/reconvergence.h); a probe that
  // needs only its verdict stops where it meets a finished trial.
  std::optional<TrialMarker> marker;
  if (windows != nullptr && options.stop_at_first_failure) {
    marker.emplace(*windows, tracks_, limit, options.verdict_only, start, stride_);
  }
  LogReader reader(*log_, start, stride_, options.cancel, [&](uint64_t i) {
    if (marker && !marker->AtPoint(i)) return false;
    if (windows == nullptr || i == start || out.failures != 0 || i % every != 0) return true;
    if (from_where == From::kGrowingLog && ++taken % 64 == 0) every *= 2;
    auto c = std::make_shared<Checkpoint>();
    c->next_event = i;
    c->window = windows->limit_window();
    c->policy = windows->CloneAt(limit);
    c->windows = WindowsOf(*c->policy);
    c->engine = engine.SaveState();
    Add(std::move(c));
    return true;
  });
  absl::StatusOr<ReplaySummary> summary = RunFromLog(engine, reader, *policy);
  if (!summary.ok()) {
    if (absl::IsCancelled(summary.status())) {
      std::lock_guard<std::mutex> lock(mu_);
      events_called_off_ += engine.summary().events_read - start;
      if (std::getenv("HBMSIM_SHARED_TRIALS_STATS") != nullptr) {
        std::fprintf(stderr, "  trial %llu: from %llu to %llu, called off, from +%.0f to +%.0f ms\n",
                     static_cast<unsigned long long>(limit.value()), static_cast<unsigned long long>(start),
                     static_cast<unsigned long long>(engine.summary().events_read), began_ms, MsSinceStart());
      }
    }
    return summary.status();
  }
  out.summary = *summary;
  out.final_stats = policy->GetStats();
  if (marker && marker->met()) {
    out.failures = *marker->met() ? 0 : 1;  // it would have stopped at its first
    out.met = true;
  } else if (marker) {
    tracks_.Add(marker->Finish(out.ok()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (std::getenv("HBMSIM_SHARED_TRIALS_STATS") != nullptr) {
    const LimitWindow w = windows != nullptr ? windows->limit_window() : LimitWindow{};
    // When the trial began and ended: the search's timeline (how busy the cores were).
    const double ms = MsSinceStart();
    std::fprintf(stderr, "  trial %llu: from %llu to %llu, %s%s, window [%llu, %llu], from +%.0f to +%.0f ms\n",
                 static_cast<unsigned long long>(limit.value()), static_cast<unsigned long long>(start),
                 static_cast<unsigned long long>(summary->events_read), out.failures ? "fails" : "fits",
                 out.met ? " (met a finished trial)" : "",
                 static_cast<unsigned long long>(w.lo.value()), static_cast<unsigned long long>(w.hi.value()), began_ms, ms);
  }
  ++trials_;
  if (from) ++resumed_;
  events_replayed_ += summary->events_read - start;
  return out;
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
  early->shared_.reset(new SharedTrials(scenario, *std::move(maker), early->log_));
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
  return trials_;
}
uint64_t SharedTrials::resumed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resumed_;
}
uint64_t SharedTrials::events_replayed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_replayed_;
}

}  // namespace hbmsim
