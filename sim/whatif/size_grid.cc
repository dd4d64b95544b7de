#include "sim/whatif/size_grid.h"

#include <algorithm>

namespace hbmsim::sim {
namespace {

// Grid points beyond this are not tried: 2^62 bytes is past any device.
constexpr uint64_t kCap = uint64_t{1} << 62;
// A narrowing round splits the open interval into this many parts.
constexpr uint64_t kNarrowParts = 4;

}  // namespace

std::vector<uint64_t> SizeGrid::BracketRound(int round) {
  static constexpr double kFactors[2][4] = {{1, 1.0625, 1.125, 1.25}, {1.5, 2, 3, 4}};
  std::vector<uint64_t> ks;
  for (int i = 0; i < 4; ++i) {
    const double f =
        round < 2 ? kFactors[round][i] : 4.0 * static_cast<double>(uint64_t{1} << (4 * (round - 2) + i + 1));
    const double limit = static_cast<double>(std::max<uint64_t>(base_, resolution_)) * f;
    if (limit >= static_cast<double>(kCap)) break;
    uint64_t k =
        static_cast<uint64_t>((limit - static_cast<double>(base_)) / static_cast<double>(resolution_));
    if (round == 0 && i == 0) k = 0;
    k = std::max(k, next_k_);
    ks.push_back(k);
    next_k_ = k + 1;
  }
  return ks;
}

std::vector<uint64_t> SizeGrid::RoundPoints(uint64_t from, uint64_t hi) {
  std::vector<uint64_t> ks;
  if (from >= hi) return ks;
  for (uint64_t q = 1; q < kNarrowParts; ++q) {
    const uint64_t k = from + (hi - from) * q / kNarrowParts;
    if (ks.empty() || ks.back() != k) ks.push_back(k);
  }
  return ks;
}

std::optional<uint64_t> SizeGrid::SmallestPass() const {
  for (const auto& [k, ok] : tried_) {
    if (ok) return k;
  }
  return std::nullopt;
}

std::optional<uint64_t> SizeGrid::LargestFailBelow(uint64_t hi) const {
  std::optional<uint64_t> lo;
  for (const auto& [k, ok] : tried_) {
    if (k < hi && !ok) lo = k;
  }
  return lo;
}

}  // namespace hbmsim::sim
