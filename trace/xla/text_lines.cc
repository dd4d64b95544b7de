#include "trace/xla/text_lines.h"

#include "fmt/format.h"

namespace hbmsim::trace::xla {

absl::Status LineError(std::string_view source, int line, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", source, line, what));
}

std::optional<std::string_view> LineCursor::Next() {
  if (rest_.empty()) return std::nullopt;
  const size_t nl = rest_.find('\n');
  std::string_view line = rest_.substr(0, nl);
  rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++line_;
  return line;
}

std::string_view StripBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool Consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::optional<uint64_t> ConsumeDecimal(std::string_view& s) {
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') {
    if (n == 19) return std::nullopt;  // beyond int64: XLA never prints that
    v = v * 10 + static_cast<uint64_t>(s[n] - '0');
    ++n;
  }
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

}  // namespace hbmsim::trace::xla
