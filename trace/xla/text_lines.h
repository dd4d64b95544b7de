// Line splitting and strict little parsers shared by the XLA text readers.
#ifndef HBMSIM_TRACE_XLA_TEXT_LINES_H_
#define HBMSIM_TRACE_XLA_TEXT_LINES_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace hbmsim::trace::xla {

// Walks `text` line by line ('\n', a trailing '\r' dropped), counting from 1.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text, int first_line = 1) : rest_(text), line_(first_line - 1) {}
  // The next line, or nullopt at the end.
  std::optional<std::string_view> Next();
  int line() const { return line_; }
  // The text from the start of the line after the current one.
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
  int line_;
};

std::string_view StripBlanks(std::string_view s);

// "SOURCE:LINE: WHAT": every XLA text reader's error.
absl::Status LineError(std::string_view source, int line, std::string_view what);

// Consumes `prefix` from `s`: true when it was there.
bool Consume(std::string_view& s, std::string_view prefix);

// Consumes a plain decimal (at most 19 digits: fits int64, as XLA prints them).
std::optional<uint64_t> ConsumeDecimal(std::string_view& s);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_TEXT_LINES_H_
