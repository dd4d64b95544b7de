// One recording of the job at one value of the size parameter, read once
// through its Scenario (the pipeline every command opens a file with) into
// what alignment, fitting and synthesis need:
//
//   events   the device's events as recorded, owned, with their contexts;
//            the marks that restate what the recorded allocator did
//            (segment_alloc, ...) are dropped: at another size the allocator
//            does other things, and the replay of a prediction finds them
//   steps    one per kept event: its kind, the alloc it concerns (allocs
//            count from 0 in order; a free names the alloc it frees) and the
//            token alignment compares
//
// A token says which call this is without its size: the event kind, the
// stream, whether it is start state, and the call's stack (every frame's
// file, line and function) or, without stacks, its `tag=` and its `shape=`'s
// element type and rank (not its dimensions: those are what scale). A free's token is
// its alloc's, so a different free order shows as a mismatch. The loose token
// leaves the line numbers out.
#ifndef HBMSIM_SIM_SCALE_MEMBER_STREAM_H_
#define HBMSIM_SIM_SCALE_MEMBER_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/layer.h"
#include "sim/scenario/scenario.h"
#include "trace/core/context_table.h"
#include "trace/core/event.h"

namespace hbmsim::sim::scale {

inline constexpr uint32_t kNoAlloc = UINT32_MAX;

struct StreamStep {
  EventKind kind = EventKind::kMark;
  uint32_t alloc = kNoAlloc;  // allocs: its ordinal; frees: the ordinal of the alloc freed
  uint64_t token = 0;
  // The same without line numbers: what still matches when the job's script
  // was edited between two recordings (a line added above the call).
  uint64_t loose_token = 0;
};

struct MemberStream {
  uint64_t value = 0;  // the size parameter it was recorded at
  std::string name;    // the path as the user gave it
  std::shared_ptr<const Scenario> scenario;
  std::vector<OwnedEvent> events;  // views point into each element (do not move them one by one)
  std::vector<EventContext> contexts;
  std::vector<StreamStep> steps;      // one per event
  std::vector<uint32_t> alloc_steps;  // alloc ordinal -> its step
  std::vector<uint64_t> alloc_bytes;  // alloc ordinal -> requested bytes
  uint64_t start_allocs = 0;          // allocs that stand for the start state (tag=preexisting)
  // The leading steps that lay out the start state (its allocs, and the
  // free_requested of a block pending then): state, not calls in order, so
  // they are aligned by size rather than by position.
  uint32_t start_steps = 0;
  uint64_t allocator_marks_dropped = 0;  // segment_alloc, ... restated by the recording
  // The trace (after the start state) is this many repeats of one run of
  // calls, the same calls in the same order each time: the iterations or
  // steps the job recorded. 1 when it is not an exact repeat.
  uint64_t iterations = 1;

  size_t allocs() const { return alloc_bytes.size(); }
};

// Reads the scenario's device events. Errors: the recording's (file:line).
// The step tokens of `m`, strict or loose, in order.
std::vector<uint64_t> StepTokens(const MemberStream& m, bool loose);

absl::StatusOr<MemberStream> ReadMemberStream(std::shared_ptr<const Scenario> scenario, uint64_t value,
                                              std::string name);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_MEMBER_STREAM_H_
