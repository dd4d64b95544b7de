#include "sim/config/option_table.h"

#include <limits>

namespace hbmsim::sim {

std::string AtLeastOneByte(const OptionValue& v) {
  return std::get<Bytes>(v).is_zero() ? "must be at least 1 byte" : "";
}

std::string IntRangeProblem(const OptionValue& v) {
  const int64_t i = std::get<int64_t>(v);
  constexpr int64_t kMin = std::numeric_limits<int>::min();
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return i >= kMin && i <= kMax ? "" : fmt::format("must be an int between {} and {}", kMin, kMax);
}

}  // namespace hbmsim::sim
