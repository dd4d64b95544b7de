// Low-level text handling for BFC log lines: removing the logger's prefix,
// a small cursor for hand-written matching (no std::regex: dumps run to tens of
// thousands of lines), and HumanReadableNumBytes values read back into bytes.
#ifndef HBMSIM_TRACE_BFC_DUMP_LINE_TEXT_H_
#define HBMSIM_TRACE_BFC_DUMP_LINE_TEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/bfc_dump/dump.h"

namespace hbmsim::trace::bfc_dump {

// A log line split into its logger prefix and its message.
struct LogLine {
  std::string_view message;        // the text after "path:line] ", or the whole line
  std::optional<double> time_sec;  // seconds since 1970 from a full "YYYY-MM-DD HH:MM:SS.uuuuuu:" stamp
  bool had_prefix = false;
};

// Removes "YYYY-MM-DD HH:MM:SS.uuuuuu: W path:line] ", "I path:line] " (TF 1.x,
// no stamp), truncated stamps ("9:07:50.044545: W ..."), glog/absl style
// "W0423 01:00:16.820335   12345 file.cc:479] " and Windows paths. A line
// without a recognisable prefix is returned whole (pasted text).
LogLine SplitLogPrefix(std::string_view line);

// Matching cursor over one message. Every Take* either consumes and returns
// true, or leaves the cursor where it was and returns false.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : rest_(text) {}

  std::string_view rest() const { return rest_; }
  bool done() const { return rest_.empty(); }

  // Exactly `literal`.
  bool Take(std::string_view literal);
  // One or more spaces or tabs (a pasted TAB often became spaces).
  bool TakeSpaces();
  void SkipSpaces();
  // A decimal unsigned number that fits in 64 bits.
  bool TakeU64(uint64_t& out);
  // A decimal number with an optional leading '-'.
  bool TakeInt(int64_t& out);
  // Hex digits (either case) with an optional "0x".
  bool TakeHex(uint64_t& out);
  // A HumanReadableNumBytes value ("256B", "16.0KiB", "585.94MiB").
  bool TakeHumanBytes(HumanBytes& out);
  // Characters up to the next space or tab (at least one).
  bool TakeWord(std::string_view& out);

 private:
  std::string_view rest_;
};

// "585.94MiB" -> 614400491; nullopt when the text is not such a value.
std::optional<HumanBytes> ParseHumanBytes(std::string_view text);

// Text with spaces and tabs removed at both ends.
std::string_view TrimSpaces(std::string_view text);

// The text before a "[...]" truncation marker; `truncated` says whether one was found.
std::string_view CutTruncation(std::string_view line, bool& truncated);

}  // namespace hbmsim::trace::bfc_dump

#endif  // HBMSIM_TRACE_BFC_DUMP_LINE_TEXT_H_
