// ReplayEngine: drives one Allocator over an EventReader.
//
//   EventReader ──Event──▶ ReplayEngine ──Allocate/Free/...──▶ Allocator
//                               │  ▲ PolicyEvent                   │
//                               ▼  └───────────────────────────────┘
//                         ReplayObservers (report, placements CSV, dumps)
//
// The engine keeps id → Handle for live buffers only, so its memory follows
// what is live in the trace, never its length, and it allocates nothing per
// event once the maps have grown to the trace's live set.
//
// Rules it applies (documented for users in README.md):
//  * A failed alloc is recorded; under OnOom::kContinue a later free,
//    free_requested or free_completed of that id is ignored (counted), under
//    kStop the replay ends right after the first failure.
//  * Policies without a program model see program_load/unload as an
//    alloc/free in a separate id space; program_run is then a no-op.
//  * peak_live_bytes is a property of the trace, not of the allocator: the max
//    over time of Σ requested bytes of live buffers and resident programs,
//    counting every alloc, failed or not. A buffer is live from its alloc
//    until its free or free_completed (free_requested does not end it).
//    Over the events from options.peak_from on, and the state before them.
//  * Only events of one device are replayed (options.device, else the device
//    of the first event); the others are skipped and counted.
//  * Paranoid mode runs CheckInvariants() after every replayed event; a broken
//    invariant is an internal error (absl::InternalError), never bad input.
#ifndef HBMSIM_SIM_ENGINE_REPLAY_ENGINE_H_
#define HBMSIM_SIM_ENGINE_REPLAY_ENGINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "allocator/core/dcheck.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "trace/core/live_id_table.h"
#include "trace/core/reader.h"

namespace hbmsim::sim {

enum class OnOom : uint8_t { kContinue, kStop };

struct ReplayOptions {
  OnOom on_oom = OnOom::kContinue;
  bool paranoid = false;
  std::optional<DeviceId> device;  // nullopt: the device of the first event
  bool check_recorded = false;     // pass `addr=` to the policy and compare placements
  // Pass `addr=` to the policy (AllocRequest::recorded_address: where a new
  // segment or region goes), without comparing: a runtime's own recording
  // replayed under its model (ScenarioRun::Prepare).
  bool recorded_bases = false;
  // Events [0, peak_from) only rebuild the state the recording began in (a
  // profile's inferred pool: Scenario::start_events); the live bytes they
  // hold for a moment (the fillers that lay out its regions) are not the
  // job's, so the peak counts from the state they leave behind.
  uint64_t peak_from = 0;
  // Buffer ids are small numbers handed out again as soon as they are freed
  // (a `size` log's, sim/engine/event_log.h): the live table indexes by them
  // instead of hashing (trace/core/live_id_table.h, KeysAreHomes).
  bool numbered_ids = false;
};

// Simulated vs recorded addresses (--check-recorded). Text traces carry no
// segment events, so segments_total stays 0 for them.
struct RecordedCheck {
  uint64_t allocs_matched = 0;
  uint64_t allocs_total = 0;  // allocs that carry `addr=`
  uint64_t segments_matched = 0;
  uint64_t segments_total = 0;
};

struct ReplaySummary {
  uint64_t events_read = 0;          // every event of the trace seen so far
  uint64_t events_replayed = 0;      // events of the selected device
  uint64_t events_other_device = 0;  // skipped: another device
  uint64_t allocs = 0;               // replayed alloc events
  uint64_t failures = 0;             // failed allocs and program loads/runs
  uint64_t ignored_frees = 0;        // free*/unload of something whose alloc failed
  uint64_t marks = 0;
  Bytes peak_live_bytes;
  std::optional<EventIndex> peak_live_event;  // the event that first reached the peak
  // Of `allocs`, those of the events before ReplayOptions::peak_from (they
  // build the state the recording began in); 0 without such events.
  uint64_t start_state_allocs = 0;
  std::optional<DeviceId> device;             // unset only for an empty trace
  bool stopped_at_failure = false;            // OnOom::kStop ended the replay early
  bool start_state_refused = false;           // the start state did not fit: nothing was replayed
  RecordedCheck recorded;
  // Events carrying attributes the format does not define (Event::attrs):
  // accepted and not used by the replay, so the report names them once.
  uint64_t events_with_other_attributes = 0;
  std::vector<std::string> other_attribute_keys;  // distinct, first seen first, at most kMaxOtherKeys
  static constexpr size_t kMaxOtherKeys = 16;
  // The devices of the skipped events, ascending, at most kMaxListedDevices:
  // what a --device with no event names instead.
  std::vector<DeviceId> other_devices;
  static constexpr size_t kMaxListedDevices = 16;
};

// One event as sim/whatif's event log holds it: no attributes, recorded
// address, shape, tag or label (ReplayEngine::RunPlain).
struct PlainEvent {
  EventKind kind = EventKind::kAlloc;
  uint64_t id = 0;
  Bytes bytes;
  DeviceId device;
  StreamId stream;
};

// `p`'s fields into `e`, whose other fields are left as they are.
inline void CopyPlain(const PlainEvent& p, Event& e) {
  e.kind = p.kind;
  e.id = p.id;
  e.bytes = p.bytes;
  e.device = p.device;
  e.stream = p.stream;
}

class ReplayEngine : private PolicyObserver {
 public:
  ReplayEngine(Allocator& allocator, const ReplayOptions& options);
  ~ReplayEngine() override;
  ReplayEngine(const ReplayEngine&) = delete;
  ReplayEngine& operator=(const ReplayEngine&) = delete;

  // Observers are called in the order they were added; they must outlive Run().
  void AddObserver(ReplayObserver* o) {
    observers_.push_back(o);
    if (o->needs_before_event()) before_event_.push_back(o);
  }

  // Replays the whole trace (or up to the first failure under kStop). Errors:
  // the reader's InvalidArgument (bad input, with its file:line), an
  // InvalidArgument for an event the engine cannot apply (free of an id that
  // is not live, when the reader does not check it), or an InternalError for a
  // broken invariant under paranoid mode.
  absl::StatusOr<ReplaySummary> Run(EventReader& reader);

  // Instead of Run: the state the trace starts from does not fit, so nothing
  // is replayed. `f` (at event 0) goes to the observers as the one failure.
  ReplaySummary RefuseStart(const FailureRecord& f);

  const ReplaySummary& summary() const { return summary_; }

  // Run for a reader of plain events (PlainEvent: what sim/whatif's event
  // log holds) over a policy of a known final type: the same summary, state,
  // failures and errors as Run(reader), event for event, with the policy's
  // calls direct and no Event filled per event. `policy` is the engine's
  // allocator. Alloc and free take this path when no observer needs them
  // (ReplayObserver::needs_allocs_and_releases) and neither paranoid mode
  // nor check_recorded is on; every other event, and every event otherwise,
  // goes through Apply as in Run. Why: the engine's bookkeeping around the
  // policy was a quarter of a `size` probe's time (bench/README.md, issue 20).
  //
  // PlainReader: an EventReader (for Location() in messages) with
  //   bool NextPlain(PlainEvent& p, absl::Status& stop)
  // true: p is the next event; false: no more, stop ok (the end) or the error.
  template <typename Policy, typename PlainReader>
  absl::StatusOr<ReplaySummary> RunPlain(PlainReader& reader, Policy& policy);

 private:
  // What the engine remembers about a live buffer or resident program.
  struct Live {
    Handle handle = kNullHandle;
    Bytes requested;
    bool placed = false;          // false: its alloc failed, so frees are ignored
    bool free_requested = false;  // free_requested seen, free_completed pending
  };

 public:
  // Everything the engine knows between two events: what a checkpoint of
  // `size` (sim/whatif/checkpoints.h) copies, so that an engine over a copy of
  // the policy goes on from there exactly as this one would. Handles stay
  // valid because the policy copy keeps them. The live buffers are a list,
  // not a copy of the table: the table is sparse (1/8 full while small), and
  // copying its empty slots for every checkpoint cost more than the rest of
  // the checkpoint.
  struct State {
    std::vector<std::pair<uint64_t, Live>> buffers;
    absl::flat_hash_map<uint64_t, Live> programs;
    Bytes live_bytes;
    EventIndex current;
    ReplaySummary summary;
  };
  State SaveState() const {
    State s{{}, programs_, live_bytes_, current_, summary_};
    s.buffers.reserve(buffers_.size());
    buffers_.ForEach([&](uint64_t id, const Live& live) { s.buffers.emplace_back(id, live); });
    return s;
  }
  // Before Run(): the reader then has to start at event summary.events_read.
  void RestoreState(const State& s) {
    buffers_ = LiveIdTable<uint64_t, Live>();
    if (options_.numbered_ids) buffers_.KeysAreHomes();
    for (const auto& [id, live] : s.buffers) buffers_.TryInsert(id, live);
    programs_ = s.programs;
    live_bytes_ = s.live_bytes;
    current_ = s.current;
    summary_ = s.summary;
  }

 private:

  // A failed request is not an error: it is counted by ReportFailure (the
  // only place summary_.failures grows), which is how Run sees it. Returning
  // a plain Status keeps a StatusOr<bool> out of every event's path.
  absl::Status Apply(const Event& e, EventIndex index, const EventReader& reader);
  [[gnu::noinline]] absl::Status ApplyOther(const Event& e, EventIndex index, const EventReader& reader);
  // Inlined into Apply: nearly every event is one of these two.
  [[gnu::always_inline]] inline absl::Status ApplyAlloc(const Event& e, EventIndex index,
                                                        const EventReader& reader);
  [[gnu::always_inline]] inline absl::Status ApplyFree(const Event& e, const EventReader& reader);
  absl::Status ApplyProgram(const Event& e, EventIndex index, const EventReader& reader);
  absl::Status ApplyProgramAsBuffer(const Event& e, EventIndex index, const EventReader& reader);
  void NotifyProgramPlaced(EventIndex index, Offset offset, Bytes size);
  bool SelectDevice(DeviceId device);
  [[gnu::noinline]] void NoteOtherAttributes(std::string_view attrs);
  // The alloc and free of Apply, over the policy as type P (Allocator, or a
  // final policy for direct calls). AllocAs returns whether the event was
  // valid, FreeAs nullptr or why it is not; an invalid event changes nothing
  // (Apply reports it with the reader's location).
  template <typename P>
  [[gnu::always_inline]] inline bool AllocAs(P& policy, const AllocRequest& req, AllocResult& r);
  template <typename P>
  [[gnu::always_inline]] inline const char* FreeAs(P& policy, EventKind kind, uint64_t id);
  bool PlainAllowed() const;
  static Event ToEvent(const PlainEvent& p);
  void AddLive(Bytes b, EventIndex index);
  // Before event options_.peak_from (or at the end, for a trace no longer):
  // the state the start events left is the first candidate for the peak, and
  // the policy's stats restart there (Allocator::ClearStats).
  [[gnu::noinline]] void StartStateBuilt();
  void RemoveLive(Bytes b) { live_bytes_ = live_bytes_.SaturatingSub(b); }
  void ReportFailure(const FailureRecord& f);
  void OnPolicyEvent(const PolicyEvent& e) override;

  Allocator& allocator_;
  const ReplayOptions options_;
  absl::InlinedVector<ReplayObserver*, 4> observers_;
  std::vector<ReplayObserver*> before_event_;  // the observers that asked for BeforeEvent
  LiveIdTable<uint64_t, Live> buffers_;  // touched on every alloc and free
  absl::flat_hash_map<uint64_t, Live> programs_;
  Bytes live_bytes_;
  EventIndex current_;
  ReplaySummary summary_;
};

template <typename P>
bool ReplayEngine::AllocAs(P& policy, const AllocRequest& req, AllocResult& r) {
  const auto [live, inserted] = buffers_.TryInsert(req.id.value(), Live{});
  if (!inserted) return false;
  r = policy.Allocate(req);
  ++summary_.allocs;
  // Field by field: a whole Live built on the stack and copied in was read
  // back wider than it was written, a store-forwarding stall on every alloc.
  live->handle = r.ok() ? r.handle : kNullHandle;
  live->requested = req.bytes;
  live->placed = r.ok();
  AddLive(req.bytes, req.event);
  return true;
}

template <typename P>
const char* ReplayEngine::FreeAs(P& policy, EventKind kind, uint64_t id) {
  Live* found = buffers_.Find(id);
  if (found == nullptr) return "that is not live";
  Live& live = *found;
  const bool completes = kind == EventKind::kFreeCompleted;
  if (completes != live.free_requested) {
    return completes ? "without a free_requested before it" : "whose free was already requested";
  }
  if (!live.placed) {
    ++summary_.ignored_frees;
  } else if (kind == EventKind::kFree) {
    policy.Free(live.handle);
  } else if (kind == EventKind::kFreeRequested) {
    policy.RequestFree(live.handle);
  } else {
    policy.CompleteFree(live.handle);
  }
  if (kind == EventKind::kFreeRequested) {
    live.free_requested = true;  // still live until free_completed
    return nullptr;
  }
  RemoveLive(live.requested);
  buffers_.Erase(found);
  return nullptr;
}

template <typename Policy, typename PlainReader>
absl::StatusOr<ReplaySummary> ReplayEngine::RunPlain(PlainReader& reader, Policy& policy) {
  HBMSIM_DCHECK(static_cast<const Allocator*>(&policy) == &allocator_, "RunPlain's policy is the engine's allocator");
  if (!PlainAllowed()) return Run(reader);
  PlainEvent p;
  absl::Status stop;
  while (reader.NextPlain(p, stop)) {
    const EventIndex index(summary_.events_read++);
    if (index.value() == options_.peak_from) [[unlikely]]
      StartStateBuilt();
    // SelectDevice's common case inline: the selected device, once known.
    if (!summary_.device || p.device != *summary_.device) [[unlikely]] {
      if (!SelectDevice(p.device)) continue;
    }
    ++summary_.events_replayed;
    current_ = index;
    const uint64_t failures_before = summary_.failures;
    // An event the direct path refuses changed nothing: Apply then reports
    // it with the reader's location, as Run would have.
    bool done = false;
    if (p.kind == EventKind::kAlloc) [[likely]] {
      AllocRequest req;
      req.id = BufferId(p.id);
      req.bytes = p.bytes;
      req.stream = p.stream;
      req.event = index;
      AllocResult r;
      done = AllocAs(policy, req, r);
      if (done && !r.ok()) {
        ReportFailure({index, p.kind, p.id, p.bytes, r.rounded, r.status, r.free_bytes, r.largest_free_block});
      }
    } else if (p.kind == EventKind::kFree) [[likely]] {
      done = FreeAs(policy, p.kind, p.id) == nullptr;
    }
    if (!done) [[unlikely]] {
      if (absl::Status s = Apply(ToEvent(p), index, reader); !s.ok()) return s;
    }
    if (summary_.failures != failures_before && options_.on_oom == OnOom::kStop) {
      summary_.stopped_at_failure = true;
      break;
    }
  }
  if (!stop.ok()) return stop;
  if (summary_.events_read <= options_.peak_from) StartStateBuilt();  // a trace no longer than its start state
  return summary_;
}

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_ENGINE_REPLAY_ENGINE_H_
