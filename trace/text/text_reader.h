// Streaming reader of the text trace format, v1 (docs/formats/text-trace.md).
//
//   file --ByteSource--> LineReader (1 MiB blocks, 1 MiB line cap)
//        --> header/comment handling (here) --> ParseEventLine --> TraceValidator
//
// Memory is one line buffer plus what the validator tracks (live ids, loaded
// programs); no heap allocation per event in steady state: an Event's tag and
// label view into the line buffer, its other attributes into a buffer of the
// reader's, and both stay valid until the next Next().
//
// Header: an optional first comment `# hbmsim-trace v1` (another version is an
// error); `# key: value` comments before the first event are metadata (a key
// has no spaces; the value is trimmed). Blank lines and other comments are
// ignored anywhere. Every error reads "<name>:<line>: <what was wrong>".
//
// After an error, Next() may be called again: it goes on with the next line
// and the rejected line changed nothing, which is what a `--lenient` replay
// needs. (Read errors of the file itself are not recoverable.)
#ifndef HBMSIM_TRACE_TEXT_TEXT_READER_H_
#define HBMSIM_TRACE_TEXT_TEXT_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/core/reader.h"
#include "trace/core/validator.h"
#include "trace/text/byte_source.h"
#include "trace/text/line_reader.h"

namespace hbmsim::trace {

class TextTraceReader : public EventReader {
 public:
  // Opens `path` and reads its header. Errors: "cannot open <path>: <strerror>",
  // or a header error with its location.
  static absl::StatusOr<std::unique_ptr<TextTraceReader>> Open(const std::string& path);
  // Reads a trace held in memory; messages name it `name`.
  static absl::StatusOr<std::unique_ptr<TextTraceReader>> FromString(std::string text,
                                                                     std::string name = "<string>");
  static absl::StatusOr<std::unique_ptr<TextTraceReader>> FromSource(
      std::unique_ptr<ByteSource> source, std::string name,
      size_t max_line_bytes = LineReader::kMaxLineBytes);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  // "<name>:<line>" of the line last read.
  std::string Location() const override;

  // 0-based index of the last event line among all event lines (comments and
  // blank lines do not count; a rejected event line does, so indices always
  // match the file). Meaningful once Next() has returned an event or an error.
  uint64_t event_index() const { return event_lines_ - 1; }
  const TraceValidator& validator() const { return validator_; }
  uint64_t bytes_read() const { return lines_.bytes_read(); }

 private:
  TextTraceReader(std::unique_ptr<ByteSource> source, std::string name, size_t max_line_bytes);

  // Reads the leading comment block and keeps the first event line pending.
  absl::Status ReadHeader();
  // A file whose first event line is no event is not a trace (a TensorFlow
  // log handed to `replay`, say): that is said when it is opened, before a
  // command asks for an allocator or a limit the file cannot give. The error
  // then also names the first line of a TensorFlow log further on, if any in
  // the next kMaxLookAheadBytes: a training log with the BFC dump at its end.
  absl::Status CheckFirstEventLine(std::string_view line);
  std::optional<uint64_t> FindTensorFlowLogLine();
  static constexpr uint64_t kMaxLookAheadBytes = uint64_t{64} << 20;
  absl::Status ParseHeaderComment(std::string_view body, bool first_comment);
  // The next raw line, NUL bytes rejected; errors already carry the location.
  absl::StatusOr<bool> NextLine(std::string_view& line);
  // The next line that is neither blank nor a comment.
  absl::StatusOr<bool> NextEventLine(std::string_view& line);
  absl::Status AtLine(const absl::Status& status) const;
  // Counts a parsed event line and validates the event.
  absl::StatusOr<bool> Accept(const Event& e);

  std::string name_;
  LineReader lines_;
  TraceMetadata metadata_;
  TraceValidator validator_;
  std::string other_attrs_;        // storage of the last event's attrs
  std::string_view pending_line_;  // the first event line, found by ReadHeader
  bool has_pending_line_ = false;
  uint64_t event_lines_ = 0;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_TEXT_READER_H_
