// `scale --fit-limit L [--step K]`: the largest value of the size parameter
// whose predicted recording fits L. The candidates are the multiples of K
// (K = 1 by default); the search brackets from the largest recording's value
// by doubling or halving, bisects down to one step, then probes the two
// steps above the first failure and the two below the answer: allocators are
// not monotonic in the request sizes either (a larger request can land where
// a smaller one fragments), so a probe that fits above a failure, or fails
// below the answer, is reported as `size` reports a non-monotonic limit, and
// the answer stays the largest value below the smallest failure.
#ifndef HBMSIM_SIM_SCALE_FIT_LIMIT_H_
#define HBMSIM_SIM_SCALE_FIT_LIMIT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scale/scale_predict.h"

namespace hbmsim::sim::scale {

// Values above this are not searched (a fit that never fails a limit).
inline constexpr uint64_t kMaxSearchedValue = uint64_t{1} << 40;

struct FitProbe {
  uint64_t n = 0;
  bool fits = false;
};

struct FitLimitResult {
  Bytes limit;
  uint64_t step = 1;
  // Replayed to the end, with where the memory is at the peak.
  std::optional<Prediction> largest_fitting;  // nullopt: not even one step fits
  std::optional<Prediction> first_failing;    // nullopt: nothing up to kMaxSearchedValue fails
  std::optional<uint64_t> fits_above;         // a probe above the first failure that fits
  std::vector<FitProbe> probes;               // ascending by n
};

absl::StatusOr<FitLimitResult> FitLimit(const ScaleModel& model, const AllocatorConfig& config, Bytes limit,
                                        uint64_t step);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_FIT_LIMIT_H_
