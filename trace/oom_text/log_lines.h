// A pasted log's lines as the texts' own lines: each stripped of what the
// loggers and the paste put before it (TensorFlow's "2022-04-04
// 00:27:49.642380: E tensorflow/...:88] ", absl's "E0404 00:27:49.642380
// 1234 file.cc:88] ", Ray's "(pid=1234) " / "(RayWorker pid=12, ip=...) ",
// a REPL's box drawing "│ ") and of indentation, plus the whole text joined
// into one line so that a sentence wrapped across lines still reads as one.
// Sizes as the runtimes print them, read into bytes with their precision.
#ifndef HBMSIM_TRACE_OOM_TEXT_LOG_LINES_H_
#define HBMSIM_TRACE_OOM_TEXT_LOG_LINES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hbmsim::trace::oom_text {

// Lines longer than this are cut (a pasted log is read whole, but no line
// of these texts is near it).
inline constexpr size_t kMaxLineBytes = 64 * 1024;
// More lines than this are not read.
inline constexpr size_t kMaxLines = 1 << 20;

struct LogLines {
  std::vector<std::string> lines;  // stripped
  std::string flat;                // the stripped lines joined by single spaces
  std::vector<size_t> starts;      // where each line starts in `flat`
  bool cut = false;                // kMaxLines reached

  // The 1-based line number of position `at` of `flat`.
  size_t LineOf(size_t at) const;
};

LogLines SplitLog(std::string_view text);
std::string StripLogPrefix(std::string_view line);

struct PrintedSize {
  int64_t bytes = 0;
  int64_t precision = 0;  // ± bytes
  size_t length = 0;      // characters read
  std::string text;       // as printed
};

// A size at the start of `s`: "31.06M", "-2.55G", "4.0K", "0B", "6.00MiB",
// "384.0KiB", "2.648 GiB", "6291456 bytes", "8B"; a following "(554,696,704
// bytes)" makes it exact. nullopt when `s` does not start with one.
std::optional<PrintedSize> ReadSize(std::string_view s);

// The text after `key` up to the end of its line in `line`, trimmed; nullopt without `key`.
std::optional<std::string_view> After(std::string_view line, std::string_view key);

}  // namespace hbmsim::trace::oom_text

#endif  // HBMSIM_TRACE_OOM_TEXT_LOG_LINES_H_
