#include "trace/core/human_bytes.h"

#include <cstdio>
#include <limits>

namespace hbmsim {

namespace {

// TensorFlow's strings::HumanReadableNumBytes on a magnitude: divide by 1024
// while at least 1 MiB is left, then print one (KiB) or two decimals.
std::string Magnitude(const char* sign, uint64_t num_bytes) {
  char buf[32];
  if (num_bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%s%lluB", sign, static_cast<unsigned long long>(num_bytes));
    return buf;
  }
  static constexpr char kUnits[] = "KMGTPE";
  const char* unit = kUnits;
  while (num_bytes >= uint64_t{1024} * 1024) {
    num_bytes /= 1024;
    ++unit;
  }
  // printf, not fmt: the exact-tie rounding must be glibc's, as in TF.
  std::snprintf(buf, sizeof(buf), *unit == 'K' ? "%s%.1f%ciB" : "%s%.2f%ciB", sign,
                static_cast<double>(num_bytes) / 1024.0, *unit);
  return buf;
}

}  // namespace

std::string HumanReadableNumBytes(int64_t num_bytes) {
  if (num_bytes == std::numeric_limits<int64_t>::min()) return "-8E";
  if (num_bytes < 0) return Magnitude("-", static_cast<uint64_t>(-num_bytes));
  return Magnitude("", static_cast<uint64_t>(num_bytes));
}

// Sizes above 2^63 (a saturated sum, a 16 EiB request) print as what they
// are, up to "16.00EiB" for 2^64 - 1, never clamped to 8 EiB.
std::string HumanReadableNumBytes(Bytes num_bytes) { return Magnitude("", num_bytes.value()); }

}  // namespace hbmsim
