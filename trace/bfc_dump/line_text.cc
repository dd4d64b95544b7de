#include "trace/bfc_dump/line_text.h"

#include <array>
#include <charconv>
#include <cmath>

namespace hbmsim::trace::bfc_dump {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Reads `n` digits at `pos` as a number, or -1.
int64_t Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// "YYYY-MM-DD HH:MM:SS.uuuuuu" at the start of `s`: seconds since 1970.
std::optional<double> FullTimestamp(std::string_view s) {
  const int64_t y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2);
  const int64_t h = Digits(s, 11, 2), mi = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return std::nullopt;
  if (s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') return std::nullopt;
  double frac = 0;
  if (s.size() > 19 && s[19] == '.') {
    double scale = 0.1;
    for (size_t i = 20; i < s.size() && IsDigit(s[i]); ++i, scale /= 10) frac += (s[i] - '0') * scale;
  }
  return static_cast<double>(DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) + frac;
}

// Characters a logger prefix is made of before the "path:line]" token.
bool IsPrefixChar(char c) {
  return IsDigit(c) || IsSpace(c) || c == '-' || c == ':' || c == '.' || c == 'I' || c == 'W' || c == 'E' ||
         c == 'F';
}

// True when `token` ends in ":<digits>" with something before the colon.
bool IsSourceLocation(std::string_view token) {
  const size_t colon = token.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == token.size()) return false;
  for (size_t i = colon + 1; i < token.size(); ++i) {
    if (!IsDigit(token[i])) return false;
  }
  return true;
}

}  // namespace

LogLine SplitLogPrefix(std::string_view line) {
  LogLine out{line, std::nullopt, false};
  const size_t bracket = line.find(']');
  if (bracket == std::string_view::npos) return out;
  if (bracket + 1 < line.size() && line[bracket + 1] != ' ') return out;
  const size_t token_start = line.find_last_of(" \t", bracket) + 1;  // npos + 1 == 0
  if (token_start >= bracket || !IsSourceLocation(line.substr(token_start, bracket - token_start))) {
    return out;
  }
  const std::string_view before = line.substr(0, token_start);
  bool has_level = false;
  for (char c : before) {
    if (!IsPrefixChar(c)) return out;
    has_level |= c == 'I' || c == 'W' || c == 'E' || c == 'F';
  }
  if (!has_level) return out;
  out.message = line.substr(std::min(line.size(), bracket + 2));
  out.time_sec = FullTimestamp(line);
  out.had_prefix = true;
  return out;
}

bool Cursor::Take(std::string_view literal) {
  if (rest_.substr(0, literal.size()) != literal) return false;
  rest_.remove_prefix(literal.size());
  return true;
}

bool Cursor::TakeSpaces() {
  if (rest_.empty() || !IsSpace(rest_[0])) return false;
  SkipSpaces();
  return true;
}

void Cursor::SkipSpaces() {
  while (!rest_.empty() && IsSpace(rest_[0])) rest_.remove_prefix(1);
}

bool Cursor::TakeU64(uint64_t& out) {
  size_t n = 0;
  while (n < rest_.size() && IsDigit(rest_[n])) ++n;
  if (n == 0) return false;
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(rest_.data(), rest_.data() + n, v);
  if (ec != std::errc()) return false;
  out = v;
  rest_.remove_prefix(n);
  return true;
}

bool Cursor::TakeInt(int64_t& out) {
  const bool negative = !rest_.empty() && rest_[0] == '-';
  Cursor probe(rest_.substr(negative ? 1 : 0));
  uint64_t magnitude = 0;
  if (!probe.TakeU64(magnitude) || magnitude > static_cast<uint64_t>(INT64_MAX)) return false;
  out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  rest_ = probe.rest();
  return true;
}

bool Cursor::TakeHex(uint64_t& out) {
  std::string_view s = rest_;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && HexValue(s[2]) >= 0) s.remove_prefix(2);
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size() && HexValue(s[n]) >= 0) {
    if (n == 16) return false;  // more than 64 bits
    v = (v << 4) | static_cast<uint64_t>(HexValue(s[n]));
    ++n;
  }
  if (n == 0) return false;
  out = v;
  rest_ = s.substr(n);
  return true;
}

bool Cursor::TakeHumanBytes(HumanBytes& out) {
  size_t n = 0;
  while (n < rest_.size() && (IsDigit(rest_[n]) || rest_[n] == '.')) ++n;
  if (n < rest_.size() && rest_[n] != 'B') ++n;  // the unit letter of KiB, MiB, ...
  if (n < rest_.size() && rest_[n] == 'i') ++n;
  if (n < rest_.size() && rest_[n] == 'B') ++n;
  std::optional<HumanBytes> parsed = ParseHumanBytes(rest_.substr(0, n));
  if (!parsed) return false;
  out = std::move(*parsed);
  rest_.remove_prefix(n);
  return true;
}

bool Cursor::TakeWord(std::string_view& out) {
  size_t n = 0;
  while (n < rest_.size() && !IsSpace(rest_[n])) ++n;
  if (n == 0) return false;
  out = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return true;
}

std::optional<HumanBytes> ParseHumanBytes(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  for (size_t u = 0; u < kUnits.size(); ++u) {
    if (text.size() <= kUnits[u].size() || !text.ends_with(kUnits[u])) continue;
    if (u == 0 && !IsDigit(text[text.size() - 2])) continue;  // "5.0KiB" also ends in "B"
    const std::string_view number = text.substr(0, text.size() - kUnits[u].size());
    double value = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || ptr != number.data() + number.size() || !IsDigit(number.back())) {
      return std::nullopt;
    }
    const double bytes = std::ldexp(value, static_cast<int>(10 * u));
    if (!(bytes < 18446744073709551615.0)) return std::nullopt;
    return HumanBytes{std::string(text), static_cast<uint64_t>(std::round(bytes))};
  }
  return std::nullopt;
}

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && (IsSpace(text.back()) || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::string_view CutTruncation(std::string_view line, bool& truncated) {
  const size_t marker = line.find("[...]");
  truncated = marker != std::string_view::npos;
  return truncated ? line.substr(0, marker) : line;
}

}  // namespace hbmsim::trace::bfc_dump
