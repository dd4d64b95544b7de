// Line reading with a cap on line length, for the line-oriented importers.
// std::getline grows its string until it meets a '\n': a multi-gigabyte file
// without one would be held whole in memory. ReadBoundedLine stops at the cap
// and says so, so a reader can report "line too long" with the line number and
// its memory stays bounded whatever the input.
#ifndef HBMSIM_TRACE_CORE_BOUNDED_LINE_H_
#define HBMSIM_TRACE_CORE_BOUNDED_LINE_H_

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace hbmsim::trace {

enum class LineRead {
  kLine,     // `line` holds the next line, without its '\n'
  kEnd,      // no more input
  kTooLong,  // the line has more than `max_chars` characters (the rest is not read)
};

inline LineRead ReadBoundedLine(std::istream& in, std::string& line, size_t max_chars) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return LineRead::kEnd;
  bool read_any = false;
  while (true) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) return read_any ? LineRead::kLine : LineRead::kEnd;
    read_any = true;
    if (c == '\n') return LineRead::kLine;
    if (line.size() == max_chars) return LineRead::kTooLong;
    line.push_back(static_cast<char>(c));
  }
}

// Blanks, tabs and a trailing '\r' (a file written on Windows) removed from both ends.
inline std::string_view TrimLine(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits `line` at runs of blanks and tabs into at most `max_fields` fields;
// returns how many fields there are in all (possibly more than `max_fields`).
inline size_t SplitFields(std::string_view line, std::string_view* fields, size_t max_fields) {
  size_t n = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (n < max_fields) fields[n] = line.substr(start, i - start);
    ++n;
  }
  return n;
}

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_BOUNDED_LINE_H_
