// What the replay engine tells the outside world while it runs: reports, the
// placements writer and memory dumps are observers, so the engine itself never
// formats anything and a replay without outputs costs nothing extra.
#ifndef HBMSIM_SIM_ENGINE_REPLAY_OBSERVER_H_
#define HBMSIM_SIM_ENGINE_REPLAY_OBSERVER_H_

#include <cstdint>
#include <string_view>

#include "allocator/core/allocator.h"
#include "allocator/core/units.h"
#include "sim/layer.h"
#include "trace/core/event.h"

namespace hbmsim::sim {

// One failed request, with the two numbers that decide its verdict (see
// allocator/core/allocator.h): kind is oom when rounded > free_bytes, else
// fragmentation.
struct FailureRecord {
  EventIndex event;
  EventKind event_kind = EventKind::kAlloc;  // alloc, or program_load/run for program policies
  uint64_t id = 0;                           // buffer id, or program id
  Bytes requested;
  Bytes rounded;
  AllocStatus kind = AllocStatus::kOom;
  Bytes free_bytes;
  Bytes largest_free_block_bytes;
};

class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  // False for an observer whose OnAlloc and OnRelease do nothing (one that
  // counts failures): the engine's plain loop (ReplayEngine::RunPlain) then
  // calls neither, and fills no Event for them.
  virtual bool needs_allocs_and_releases() const { return true; }
  // True for an observer that reads the policy's state as it was after the
  // previous event (BeforeEvent); asked once, when the observer is added.
  virtual bool needs_before_event() const { return false; }
  // Event `index` of the selected device is about to be applied: the policy
  // is still in the state the previous one left. Only for observers whose
  // needs_before_event() is true, so a replay without them pays nothing.
  virtual void BeforeEvent(EventIndex index) {}
  // Every replayed `alloc` event, in trace order, whatever its outcome.
  virtual void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {}
  // A buffer stops being live: its `free`, or its `free_completed` (a
  // `free_requested` alone keeps it live), whether its alloc was placed or not.
  virtual void OnRelease(EventIndex index, const Event& e) {}
  // Every failed request (allocs and program loads/runs), after OnAlloc.
  virtual void OnFailure(const FailureRecord& f) {}
  // A program was placed at [offset, offset + size) by its load (event
  // `index`), whether the policy models programs or takes them as buffers:
  // memory taken that no OnAlloc reports.
  virtual void OnProgramPlaced(EventIndex index, Offset offset, Bytes size) {}
  // Something the policy did on its own while handling event `index`.
  virtual void OnPolicyEvent(EventIndex index, const PolicyEvent& e) {}
  // A `mark` line; `label` is valid only during the call.
  virtual void OnMark(EventIndex index, std::string_view label) {}
  // The events before ReplayOptions::peak_from only rebuilt the state the
  // recording began in; `last` is the last of them replayed. What is live now
  // is the first candidate for the peak, and earlier peaks were not the job's.
  virtual void OnStartStateBuilt(EventIndex last) {}
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_ENGINE_REPLAY_OBSERVER_H_
