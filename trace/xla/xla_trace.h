// What every XLA importer produces: a finished, validated list of events plus
// the notes a user must see (what was skipped and why). XLA's memory artifacts
// (buffer-assignment text, live ranges, heap-simulator traces) describe one
// compiled program, so they are small and read whole; the events are then
// served by XlaEventReader one at a time like any other trace.
//
// Public entry points (also the fuzzing surface; each takes the bytes and a
// name for messages, so no file is needed):
//   ParseBufferAssignmentText  (buffer_assignment_text.h)
//   ParseLiveRangeText         (live_range_text.h)
//   JoinTextPair / ReadTextPairFiles (text_pair.h)
//   ParseHeapSimulatorProto / ReadHeapSimulatorProtoFile (heap_trace_proto.h)
//   FindRematWarnings          (remat_warning.h)
#ifndef HBMSIM_TRACE_XLA_XLA_TRACE_H_
#define HBMSIM_TRACE_XLA_XLA_TRACE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::xla {

struct XlaTrace {
  std::string source;                 // the file (or name) the events came from
  std::vector<OwnedEvent> events;     // in replay order
  TraceMetadata metadata;             // `# key: value` entries a writer keeps
  std::vector<std::string> warnings;  // "<file>: what was skipped and why", one line each
};

// One value (or a group of aliased values) of the program with its inclusive
// logical live range [start, end].
struct LiveInterval {
  uint64_t id = 0;   // buffer id of the events
  std::string name;  // becomes tag= (blanks replaced by '_')
  Bytes size;
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive
  std::optional<uint64_t> addr;
};

// Turns intervals into alloc/free events. The tie rule, because XLA's end
// times are inclusive (a value ending at t is still live during t):
//   at each time t, first every alloc starting at t, then every free ending
//   at t, each group by increasing id.
// So everything live at t is allocated together before anything of t is
// freed (the peak equals HloLiveRange's own "live at t" sum), and every free
// of t comes before any alloc of t+1. t= is the logical time.
std::vector<OwnedEvent> IntervalsToEvents(const std::vector<LiveInterval>& intervals);

// Serves a finished XlaTrace. Location() is "<source>: event N" (1-based).
class XlaEventReader : public EventReader {
 public:
  explicit XlaEventReader(XlaTrace trace) : trace_(std::move(trace)) {}
  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return trace_.metadata; }
  std::string Location() const override;
  const std::vector<std::string>& warnings() const { return trace_.warnings; }

 private:
  XlaTrace trace_;
  size_t next_ = 0;
};

// `name` made safe for tag=: blanks, tabs and line breaks become '_'.
std::string TagSafe(std::string_view name);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_XLA_TRACE_H_
