// Writes a trace as text or .hbt by a format name, so every command that
// produces traces (convert, gen) picks the encoding the same way.
#ifndef HBMSIM_TRACE_BINARY_TRACE_SINK_H_
#define HBMSIM_TRACE_BINARY_TRACE_SINK_H_

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::trace {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual absl::Status WriteHeader(const TraceMetadata& m) = 0;
  virtual absl::Status Write(const Event& e) = 0;
  // Flushes (and for .hbt writes the end-of-trace record).
  virtual absl::Status Finish() = 0;
};

// "text", "binary" or "binary-zstd" implied by a file name: .hbt is binary,
// .hbt.zst and .hbtz compressed binary, anything else text.
std::string TraceFormatForPath(std::string_view path);

// A sink writing `format` ("text", "binary", "binary-zstd") to `out`.
absl::StatusOr<std::unique_ptr<TraceSink>> MakeTraceSink(std::ostream& out, std::string_view format);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_BINARY_TRACE_SINK_H_
