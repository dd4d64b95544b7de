// Writes the canonical form of the text trace format, v1
// (docs/formats/text-trace.md): what `hbmsim convert` emits, and the form in
// which diffs of traces are meaningful.
//
//   # hbmsim-trace v1
//   # key: value                      one line per metadata entry, in order
//   alloc <id> <bytes> [t=] [stream=] [tag=] [shape=] [addr=0x..] [device=] [other attrs]
//   ...
//
// Canonical means: full keywords (never `a`/`f`), sizes in plain bytes,
// attributes in the fixed order t, stream, tag, shape, addr, device, then the
// attributes the format does not define as they were read (Event::attrs),
// defaults omitted (stream=0 and device=0; t=, addr= and shape= only when present), the
// shape in its canonical spelling and addr= in lower-case hex. Reading a
// canonical file and writing it back gives identical bytes.
//
// Syntax only: whether the events make sense together (ids live, programs
// loaded) is TraceValidator's business, checked when the file is read back.
// The writer refuses what the format cannot carry instead of writing a line no
// reader would accept: a tag or label with blanks, an attribute on an event
// that has no place for it. A size on an event without a <bytes> field (an
// importer's free that knows its size) is dropped: the alloc already says it.
#ifndef HBMSIM_TRACE_TEXT_TEXT_WRITER_H_
#define HBMSIM_TRACE_TEXT_TEXT_WRITER_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::trace {

class TextTraceWriter {
 public:
  explicit TextTraceWriter(std::ostream& out) : out_(out) {}
  // Flushes what is buffered; call Flush() first to learn about write errors.
  ~TextTraceWriter() { (void)Flush(); }
  TextTraceWriter(const TextTraceWriter&) = delete;
  TextTraceWriter& operator=(const TextTraceWriter&) = delete;

  // The version header and one `# key: value` line per entry (values written
  // trimmed, as a reader reads them back). At most once, before any event;
  // Write() writes a bare version header if this was never called.
  absl::Status WriteHeader(const TraceMetadata& metadata);
  absl::Status Write(const Event& e);
  // Hands buffered text to the stream; "write error" when the stream failed.
  absl::Status Flush();

  // The canonical line of `e`, without "\n", appended to `out`.
  static absl::Status FormatEvent(const Event& e, fmt::memory_buffer& out);

 private:
  absl::Status FlushIfFull();

  std::ostream& out_;
  fmt::memory_buffer buf_;
  bool header_written_ = false;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_TEXT_WRITER_H_
