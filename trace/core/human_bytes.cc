#include "trace/core/human_bytes.h"

#include <cstdio>
#include <limits>

namespace hbmsim::trace {

std::string HumanReadableNumBytes(int64_t num_bytes) {
  if (num_bytes == std::numeric_limits<int64_t>::min()) return "-8E";
  const char* sign = num_bytes < 0 ? "-" : "";
  if (num_bytes < 0) num_bytes = -num_bytes;
  char buf[32];
  if (num_bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%s%lldB", sign, static_cast<long long>(num_bytes));
    return buf;
  }
  static constexpr char kUnits[] = "KMGTPE";
  const char* unit = kUnits;
  while (num_bytes >= int64_t{1024} * 1024) {
    num_bytes /= 1024;
    ++unit;
  }
  // printf, not fmt: the exact-tie rounding must be glibc's, as in TF.
  std::snprintf(buf, sizeof(buf), *unit == 'K' ? "%s%.1f%ciB" : "%s%.2f%ciB", sign, num_bytes / 1024.0,
                *unit);
  return buf;
}

std::string HumanReadableNumBytes(Bytes num_bytes) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return HumanReadableNumBytes(static_cast<int64_t>(num_bytes.value() > kMax ? kMax : num_bytes.value()));
}

}  // namespace hbmsim::trace
