// A recording: one trace file opened once, with everything it knows.
//
//   Recording ──Events(device)──▶ EventReader   (a fresh stream per call)
//       │
//       └─ facts()   RecordedFacts (recorded_facts.h): metadata, devices,
//                    each device's settings, limit, start state, recorded OOM
//                    and final history, the final state, held state, context
//                    table: one value, filled when the file is opened
//
// A wrapper (a piped input's NamedRecording, a `scale` prediction) passes
// the facts of what it wraps on as one value, changed where it must, so no
// fact is lost on the way.
//
// Events() can be called again and again, from several threads at once: a
// `size` search replays the recording once per trial, reading it afresh each
// time instead of holding its events in memory. A format held in memory (a
// snapshot, an XLA dump) serves each stream from that copy; a streamed format
// (text, .hbt, logs) reopens its file, so its memory stays what one reader
// needs. A file that cannot be read twice (a pipe) fails on the second call.
#ifndef HBMSIM_TRACE_FORMATS_RECORDING_H_
#define HBMSIM_TRACE_FORMATS_RECORDING_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "trace/core/reader.h"
#include "trace/core/trace_format.h"
#include "trace/formats/recorded_facts.h"

namespace hbmsim::trace {

class Recording {
 public:
  Recording(std::string path, TraceFormat format, RecordedFacts facts)
      : path_(std::move(path)), format_(format), facts_(std::move(facts)) {
    if (facts_.description.empty()) facts_.description = std::string(TraceFormatName(format_));
  }
  virtual ~Recording() = default;
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  const std::string& path() const { return path_; }
  // The format it was read as; TraceFormatName() spells it ("text", "torch-snapshot", ...).
  TraceFormat format() const { return format_; }
  const RecordedFacts& facts() const { return facts_; }

  // A new stream from the first event: only `device`'s events when the
  // format can select them without reading the others, else every device's
  // (the replay engine skips the others). nullopt: every device. The ids of a
  // device's start state are those of its events here.
  virtual absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const = 0;

 private:
  std::string path_;
  TraceFormat format_;
  RecordedFacts facts_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_FORMATS_RECORDING_H_
