// Parses one event line of the text trace format, v1
// (docs/formats/text-trace.md) into an Event. Syntax only: whether the ids
// make sense together is TraceValidator's job.
#ifndef HBMSIM_TRACE_TEXT_EVENT_PARSER_H_
#define HBMSIM_TRACE_TEXT_EVENT_PARSER_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "trace/core/event.h"

namespace hbmsim::trace {

// `line` is neither blank nor a comment and holds no "\n". On success `e` is
// overwritten; its tag and label view into `line`, its attrs into
// `other_attrs` (the caller's storage, reused line after line): attributes the
// format does not define are accepted and kept there, `key=value` fields
// joined by single spaces. Errors say what was wrong, without a location (the
// reader prefixes "file:line: "), e.g.
//   unknown event 'allocate' (expected alloc, free, ...)
//   missing <bytes> in 'alloc <id> <bytes> [attrs]'
//   bad <id>: 'x1' is not a decimal number
//   unexpected extra field '2' in 'free <id> [attrs]'
//   attribute tag= is not allowed on free (only on alloc and program_load)
absl::Status ParseEventLine(std::string_view line, Event& e, std::string& other_attrs);

// A line of a TensorFlow or XLA log (a BFC allocator's out-of-memory dump is
// one): people hand those to `replay` and `size` for the trace they are not.
bool LooksLikeTensorFlowLog(std::string_view line);

// Splits off the next field of `rest` (fields are separated by runs of
// spaces and tabs); empty when none is left. Inline: it runs for every field.
inline std::string_view NextField(std::string_view& rest) {
  size_t i = 0;
  while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
  size_t j = i;
  while (j < rest.size() && rest[j] != ' ' && rest[j] != '\t') ++j;
  const std::string_view field = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return field;
}

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_EVENT_PARSER_H_
