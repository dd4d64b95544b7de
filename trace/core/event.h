// The event model every reader produces and every writer and the replay
// engine consume (the text format of docs/formats/text-trace.md, v1).
//
// An Event is a plain value. Its string fields are views into storage owned by
// the reader that produced it and stay valid until that reader's next Next()
// call; copy them (Event::Own) if they must live longer. That is what keeps
// reading free of heap allocation per event.
#ifndef HBMSIM_TRACE_CORE_EVENT_H_
#define HBMSIM_TRACE_CORE_EVENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "allocator/core/shape.h"
#include "allocator/core/units.h"
#include "trace/layer.h"

namespace hbmsim::trace {

enum class EventKind : uint8_t {
  kAlloc,
  kFree,
  kFreeRequested,
  kFreeCompleted,
  kProgramLoad,
  kProgramRun,
  kProgramUnload,
  kMark,
};

// The keyword of the text format ("alloc", "free_requested", ...).
std::string_view EventKindName(EventKind k);
// True for the kinds whose first field is a buffer id.
inline bool IsBufferEvent(EventKind k) { return k <= EventKind::kFreeCompleted; }
inline bool IsProgramEvent(EventKind k) {
  return k >= EventKind::kProgramLoad && k <= EventKind::kProgramUnload;
}

struct Event {
  EventKind kind = EventKind::kMark;
  uint64_t id = 0;                   // buffer id (alloc/free*) or program id (program_*)
  Bytes bytes;                       // alloc, program_load
  DeviceId device;                   // `device=`, default 0
  StreamId stream;                   // `stream=`, default 0
  std::optional<uint64_t> time_us;   // `t=`
  std::optional<uint64_t> addr;      // `addr=`: the address the recording saw
  std::optional<TensorShape> shape;  // `shape=`, parsed and validated
  std::string_view tag;              // `tag=`; empty when absent
  std::string_view label;            // `mark <label>`
  // Attributes the format does not define (it is open: `step=3`,
  // `layer=l0.qkv`), as `key=value` fields joined by single spaces in the
  // order read; empty when none. Kept so that `convert` writes them back.
  std::string_view attrs;

  BufferId buffer() const { return BufferId(id); }
  ProgramId program() const { return ProgramId(id); }
};

// The `tag=` of an alloc that stands for memory already held when the
// recording began (a snapshot's blocks live at the start of its trace), not
// an allocation the recording saw: reports show it as start state.
inline constexpr std::string_view kStartStateTag = "preexisting";

// An Event whose strings it owns (for tests, and for the rare command that
// keeps events, e.g. to write them back out later).
struct OwnedEvent {
  Event event;
  std::string tag;
  std::string label;
  std::string attrs;

  static OwnedEvent Own(const Event& e);
  // The Event with its views pointing into this object.
  const Event& get();
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_EVENT_H_
