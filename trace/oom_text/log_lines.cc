#include "trace/oom_text/log_lines.h"

#include <algorithm>
#include <cmath>

namespace hbmsim::trace::oom_text {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "... file.cc:88] " of TensorFlow's and absl's headers: the text after "] ", when the
// part before it looks like a header (starts with a date or a severity letter and digits).
std::string_view StripLoggerHeader(std::string_view s) {
  const size_t close = s.find("] ");
  if (close == std::string_view::npos || close > 160 || s.size() < 6) return s;
  const bool tf_date = IsDigit(s[0]) && IsDigit(s[1]) && IsDigit(s[2]) && IsDigit(s[3]) && s[4] == '-';
  const bool absl =
      (s[0] == 'E' || s[0] == 'W' || s[0] == 'I' || s[0] == 'F') && IsDigit(s[1]) && IsDigit(s[2]);
  return tf_date || absl ? s.substr(close + 2) : s;
}

// Ray's "(pid=1234) ", "(RayWorker pid=12, ip=10.0.0.1) ", "(raylet) ".
std::string_view StripRayPrefix(std::string_view s) {
  if (s.empty() || s.front() != '(') return s;
  const size_t close = s.find(") ");
  if (close == std::string_view::npos || close > 120) return s;
  const std::string_view inside = s.substr(1, close - 1);
  const bool ray = inside.find("pid=") != std::string_view::npos || inside == "raylet";
  return ray ? s.substr(close + 2) : s;
}

// A REPL's or logger's box drawing: "│ ", "┌ ", "└ " (UTF-8, 3 bytes each).
std::string_view StripBox(std::string_view s) {
  for (std::string_view box : {"\u2502", "\u250c", "\u2514"}) {
    if (s.starts_with(box)) return s.substr(box.size());
  }
  return s;
}

}  // namespace

std::string StripLogPrefix(std::string_view line) {
  std::string_view s = Trim(line);
  for (int i = 0; i < 3; ++i) {  // a Ray worker's line can carry a logger header, and the reverse
    const std::string_view before = s;
    s = TrimLeft(StripBox(TrimLeft(StripLoggerHeader(StripRayPrefix(s)))));
    if (s == before) break;
  }
  return std::string(Trim(s));
}

LogLines SplitLog(std::string_view text) {
  LogLines out;
  while (!text.empty()) {
    if (out.lines.size() == kMaxLines) {
      out.cut = true;
      break;
    }
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    out.lines.push_back(StripLogPrefix(line.substr(0, kMaxLineBytes)));
  }
  for (const std::string& l : out.lines) {
    if (!out.flat.empty()) out.flat += ' ';
    out.starts.push_back(out.flat.size());
    out.flat += l;
  }
  return out;
}

size_t LogLines::LineOf(size_t at) const {
  const auto it = std::upper_bound(starts.begin(), starts.end(), at);
  return static_cast<size_t>(it - starts.begin());
}

std::optional<std::string_view> After(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return Trim(line.substr(at + key.size()));
}

namespace {

// "(     554,696,704 bytes)" right after a size: the exact bytes.
std::optional<int64_t> ExactInParentheses(std::string_view s, size_t& length) {
  std::string_view rest = TrimLeft(s);
  if (rest.empty() || rest.front() != '(') return std::nullopt;
  rest = TrimLeft(rest.substr(1));
  bool negative = false;
  if (!rest.empty() && rest.front() == '-') {
    negative = true;
    rest.remove_prefix(1);
  }
  int64_t v = 0;
  size_t digits = 0;
  while (!rest.empty() && (IsDigit(rest.front()) || rest.front() == ',') && digits < 19) {
    if (rest.front() != ',') {
      v = v * 10 + (rest.front() - '0');
      ++digits;
    }
    rest.remove_prefix(1);
  }
  if (digits == 0 || !rest.starts_with(" bytes)")) return std::nullopt;
  rest.remove_prefix(7);
  length = s.size() - rest.size();
  return negative ? -v : v;
}

int64_t UnitBytes(std::string_view unit) {
  const char c = unit.empty() ? 'B' : unit.front();
  switch (c) {
    case 'K':
      return int64_t{1} << 10;
    case 'M':
      return int64_t{1} << 20;
    case 'G':
      return int64_t{1} << 30;
    case 'T':
      return int64_t{1} << 40;
    default:
      return 1;
  }
}

}  // namespace

std::optional<PrintedSize> ReadSize(std::string_view s) {
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) ++i;
  const size_t number_start = i;
  while (i < s.size() && IsDigit(s[i]) && i - number_start < 19) ++i;
  if (i == number_start) return std::nullopt;
  size_t decimals = 0;
  if (i + 1 < s.size() && s[i] == '.' && IsDigit(s[i + 1])) {
    ++i;
    while (i < s.size() && IsDigit(s[i]) && decimals < 9) ++i, ++decimals;
  }
  const double value = std::strtod(std::string(s.substr(number_start, i - number_start)).c_str(), nullptr);
  size_t unit_start = i;
  if (unit_start < s.size() && s[unit_start] == ' ') ++unit_start;  // "2.648 GiB", "6291456 bytes"
  std::string_view rest = s.substr(unit_start);
  size_t unit_length = 0;
  for (std::string_view unit : {"bytes", "KiB", "MiB", "GiB", "TiB", "K", "M", "G", "T", "B"}) {
    if (rest.starts_with(unit)) {
      unit_length = unit.size();
      break;
    }
  }
  if (unit_length == 0) return std::nullopt;  // a bare number is not a size here
  const int64_t unit = UnitBytes(rest.substr(0, unit_length));
  PrintedSize out;
  out.length = unit_start + unit_length;
  out.text = std::string(s.substr(0, out.length));
  const double bytes = value * static_cast<double>(unit);
  if (bytes > 9.0e18) return std::nullopt;
  out.bytes = static_cast<int64_t>(std::llround(bytes)) * (negative ? -1 : 1);
  out.precision =
      unit == 1 ? 0 : static_cast<int64_t>(0.5 * std::pow(10.0, -double(decimals)) * double(unit));
  size_t exact_length = 0;
  if (std::optional<int64_t> exact = ExactInParentheses(s.substr(out.length), exact_length)) {
    out.bytes = *exact;
    out.precision = 0;
    out.text = std::string(Trim(s.substr(0, out.length + exact_length)));
    out.length += exact_length;
  }
  return out;
}

}  // namespace hbmsim::trace::oom_text
