#include "trace/core/numbers.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

struct Unit {
  std::string_view suffix;
  uint64_t multiplier;
  bool extended;  // only with allow_more_units
};

constexpr std::array<Unit, 10> kUnits = {{
    {"KiB", uint64_t{1} << 10, false},
    {"MiB", uint64_t{1} << 20, false},
    {"GiB", uint64_t{1} << 30, false},
    {"TiB", uint64_t{1} << 40, false},
    {"PiB", uint64_t{1} << 50, true},
    {"KB", 1000ull, true},
    {"MB", 1000ull * 1000, true},
    {"GB", 1000ull * 1000 * 1000, true},
    {"TB", 1000ull * 1000 * 1000 * 1000, true},
    {"B", 1, true},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

absl::StatusOr<uint64_t> ParseU64(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("empty number");
  if (text[0] == '-') {
    return absl::InvalidArgumentError(fmt::format("negative number '{}'", text));
  }
  for (char c : text) {
    if (!IsDigit(c)) {
      return absl::InvalidArgumentError(fmt::format("'{}' is not a decimal number", text));
    }
  }
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(fmt::format("'{}' does not fit in 64 bits", text));
  }
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return absl::InvalidArgumentError(fmt::format("'{}' is not a decimal number", text));
  }
  return v;
}

absl::StatusOr<uint64_t> ParseAddress(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string_view hex = text.substr(2);
    uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
    if (ec == std::errc::result_out_of_range) {
      return absl::InvalidArgumentError(fmt::format("address '{}' does not fit in 64 bits", text));
    }
    if (ec != std::errc() || ptr != hex.data() + hex.size()) {
      return absl::InvalidArgumentError(fmt::format("'{}' is not a hexadecimal address", text));
    }
    return v;
  }
  return ParseU64(text);
}

namespace {

// "1.5GiB" (command line and configs): `whole`.`fraction` times the unit's
// bytes, exactly, and only when that is a whole number of bytes.
absl::StatusOr<Bytes> FractionalBytes(std::string_view text, std::string_view whole, std::string_view fraction,
                                      uint64_t multiplier) {
  constexpr size_t kMaxFractionDigits = 18;  // 10^18 and the unit's bytes stay within 128 bits
  if (fraction.empty()) return absl::InvalidArgumentError(fmt::format("'{}' is not a size: no digit after the point", text));
  if (fraction.size() > kMaxFractionDigits) {
    return absl::InvalidArgumentError(fmt::format("'{}' is not a size: at most {} digits after the point", text,
                                                  kMaxFractionDigits));
  }
  absl::StatusOr<uint64_t> w = ParseU64(whole.empty() ? "0" : whole);
  absl::StatusOr<uint64_t> f = ParseU64(fraction);
  if (!w.ok() || !f.ok()) return absl::InvalidArgumentError(fmt::format("size '{}' does not fit in 64 bits", text));
  unsigned __int128 scale = 1;
  for (size_t i = 0; i < fraction.size(); ++i) scale *= 10;
  const unsigned __int128 bytes_times_scale =
      (static_cast<unsigned __int128>(*w) * scale + *f) * static_cast<unsigned __int128>(multiplier);
  if (bytes_times_scale % scale != 0) {
    return absl::InvalidArgumentError(fmt::format("'{}' is not a whole number of bytes", text));
  }
  const unsigned __int128 bytes = bytes_times_scale / scale;
  if (bytes > UINT64_MAX) return absl::InvalidArgumentError(fmt::format("size '{}' does not fit in 64 bits", text));
  return Bytes(static_cast<uint64_t>(bytes));
}

}  // namespace

absl::StatusOr<Bytes> ParseBytes(std::string_view text, bool allow_more_units) {
  size_t digits = 0;
  while (digits < text.size() && IsDigit(text[digits])) ++digits;
  // With a unit, the command line also takes a fraction: "1.5GiB".
  size_t point = std::string_view::npos;
  if (allow_more_units && digits < text.size() && text[digits] == '.') {
    point = digits++;
    while (digits < text.size() && IsDigit(text[digits])) ++digits;
  }
  const std::string_view number = text.substr(0, digits);
  const std::string_view suffix = text.substr(digits);
  uint64_t multiplier = 1;
  if (!suffix.empty()) {
    bool found = false;
    for (const Unit& u : kUnits) {
      if (u.suffix == suffix && (allow_more_units || !u.extended)) {
        multiplier = u.multiplier;
        found = true;
        break;
      }
    }
    if (!found || number.empty()) {
      if (!text.empty() && text[0] == '-') {
        return absl::InvalidArgumentError(fmt::format("negative size '{}'", text));
      }
      return absl::InvalidArgumentError(fmt::format(
          "'{}' is not a size (plain bytes, or a number with {})", text,
          allow_more_units ? "B, KiB, MiB, GiB, TiB, PiB, KB, MB, GB or TB" : "KiB, MiB, GiB or TiB"));
    }
  }
  if (point != std::string_view::npos) {
    if (suffix.empty()) {
      return absl::InvalidArgumentError(
          fmt::format("'{}' is not a size: a fraction needs a unit (1.5GiB); plain bytes are whole", text));
    }
    return FractionalBytes(text, number.substr(0, point), number.substr(point + 1), multiplier);
  }
  absl::StatusOr<uint64_t> n = ParseU64(number);
  if (!n.ok()) {
    if (number.empty() && !text.empty() && text[0] == '-') {
      return absl::InvalidArgumentError(fmt::format("negative size '{}'", text));
    }
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not a size: {}", text, std::string(n.status().message())));
  }
  if (*n != 0 && multiplier > UINT64_MAX / *n) {
    return absl::InvalidArgumentError(fmt::format("size '{}' does not fit in 64 bits", text));
  }
  return Bytes(*n * multiplier);
}

std::string DecimalUnitNote(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && (IsDigit(text[digits]) || text[digits] == '.')) ++digits;
  const std::string_view number = text.substr(0, digits);
  const std::string_view suffix = text.substr(digits);
  static constexpr std::array<std::string_view, 4> kDecimal = {"KB", "MB", "GB", "TB"};
  if (number.empty() || std::find(kDecimal.begin(), kDecimal.end(), suffix) == kDecimal.end()) return "";
  const absl::StatusOr<Bytes> bytes = ParseBytes(text, /*allow_more_units=*/true);
  if (!bytes.ok()) return "";
  const std::string binary = fmt::format("{}{}iB", number, suffix.substr(0, 1));
  const absl::StatusOr<Bytes> binary_bytes = ParseBytes(binary, /*allow_more_units=*/true);
  return fmt::format(
      "{} read as decimal {} = {} bytes; TensorFlow logs print MiB as \"MB\": for a number "
      "copied from one, write {}{}",
      text, suffix, bytes->value(), binary,
      binary_bytes.ok() ? fmt::format(" ({} bytes)", binary_bytes->value()) : "");
}

}  // namespace hbmsim::trace
