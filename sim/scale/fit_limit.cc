#include "sim/scale/fit_limit.h"

#include <algorithm>
#include <map>

#include "fmt/format.h"

namespace hbmsim::sim::scale {
namespace {

class Search {
 public:
  Search(const ScaleModel& model, const AllocatorConfig& config, Bytes limit, uint64_t step)
      : model_(model), config_(config), flag_(fmt::format("{}", limit.value())), step_(step) {}

  // Whether the prediction at k steps fits; each k is replayed once.
  absl::StatusOr<bool> Fits(uint64_t k) {
    if (const auto it = probes_.find(k); it != probes_.end()) return it->second;
    ScaleRunOptions options;
    options.stop_at_first_failure = true;
    absl::StatusOr<Prediction> p = PredictAt(model_, config_, flag_, k * step_, options);
    if (!p.ok()) return p.status();
    probes_[k] = p->run.fits();
    return p->run.fits();
  }
  absl::StatusOr<Prediction> Full(uint64_t k) const {
    ScaleRunOptions options;
    options.attribute = true;
    return PredictAt(model_, config_, flag_, k * step_, options);
  }
  uint64_t max_k() const { return kMaxSearchedValue / step_; }
  const std::map<uint64_t, bool>& probes() const { return probes_; }

 private:
  const ScaleModel& model_;
  const AllocatorConfig& config_;
  std::string flag_;
  uint64_t step_;
  std::map<uint64_t, bool> probes_;  // k -> fits, ascending
};

// (largest fitting k or 0, smallest failing k or 0) around the first probe.
absl::StatusOr<std::pair<uint64_t, uint64_t>> Bracket(Search& s, uint64_t k0) {
  absl::StatusOr<bool> first = s.Fits(k0);
  if (!first.ok()) return first.status();
  uint64_t lo = 0, hi = 0;
  if (*first) {
    for (lo = k0; lo <= s.max_k() / 2;) {
      absl::StatusOr<bool> f = s.Fits(lo * 2);
      if (!f.ok()) return f.status();
      if (!*f) return std::make_pair(lo, lo * 2);
      lo *= 2;
    }
    return std::make_pair(lo, uint64_t{0});
  }
  for (hi = k0; hi > 1;) {
    absl::StatusOr<bool> f = s.Fits(hi / 2);
    if (!f.ok()) return f.status();
    if (*f) return std::make_pair(hi / 2, hi);
    hi /= 2;
  }
  return std::make_pair(uint64_t{0}, hi);
}

absl::Status Bisect(Search& s, uint64_t lo, uint64_t hi) {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    absl::StatusOr<bool> f = s.Fits(mid);
    if (!f.ok()) return f.status();
    (*f ? lo : hi) = mid;
  }
  // Around the boundary: a fit above the failure or a failure below the answer.
  for (uint64_t k : {hi + 1, hi + 2, lo - 1, lo - 2}) {
    if (k < 1 || k > s.max_k() || k > hi + 2) continue;
    if (absl::StatusOr<bool> f = s.Fits(k); !f.ok()) return f.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FitLimitResult> FitLimit(const ScaleModel& model, const AllocatorConfig& config, Bytes limit,
                                        uint64_t step) {
  if (step == 0) return absl::InvalidArgumentError("--step 0: must be at least 1");
  Search s(model, config, limit, step);
  const uint64_t k0 = std::max<uint64_t>(1, model.largest_value() / step);
  absl::StatusOr<std::pair<uint64_t, uint64_t>> bracket = Bracket(s, k0);
  if (!bracket.ok()) return bracket.status();
  if (bracket->first != 0 && bracket->second != 0) {
    if (absl::Status st = Bisect(s, bracket->first, bracket->second); !st.ok()) return st;
  }
  FitLimitResult out;
  out.limit = limit;
  out.step = step;
  uint64_t smallest_fail = 0;
  for (const auto& [k, fits] : s.probes()) {
    out.probes.push_back({k * step, fits});
    if (!fits && smallest_fail == 0) smallest_fail = k;
  }
  uint64_t answer = 0;
  for (const auto& [k, fits] : s.probes()) {
    if (fits && (smallest_fail == 0 || k < smallest_fail)) answer = k;
    if (fits && smallest_fail != 0 && k > smallest_fail && !out.fits_above) out.fits_above = k * step;
  }
  if (answer != 0) {
    absl::StatusOr<Prediction> p = s.Full(answer);
    if (!p.ok()) return p.status();
    out.largest_fitting = *std::move(p);
  }
  if (smallest_fail != 0) {
    absl::StatusOr<Prediction> p = s.Full(smallest_fail);
    if (!p.ok()) return p.status();
    out.first_failing = *std::move(p);
  }
  return out;
}

}  // namespace hbmsim::sim::scale
