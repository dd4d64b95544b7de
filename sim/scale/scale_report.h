// What `hbmsim scale` says, as text and as --json: the recordings and how
// they align, the fits, the prediction's replay, and (when asked) the largest
// size that fits a limit and the leave-one-out check. The command fills a
// ScaleReport; the Python binding and sweeps read the same --json.
#ifndef HBMSIM_SIM_SCALE_SCALE_REPORT_H_
#define HBMSIM_SIM_SCALE_SCALE_REPORT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/scale/fit_limit.h"
#include "sim/scale/scale_check.h"
#include "sim/scale/scale_predict.h"

namespace hbmsim::sim::scale {

// How far beyond the largest recording a prediction may go before the report
// warns that it extrapolates far: 4x the largest value.
inline constexpr double kFarExtrapolation = 4.0;

struct ScaleReport {
  const ScaleModel* model = nullptr;
  const AllocatorConfig* config = nullptr;
  std::vector<std::string> applied_settings;     // taken from the template recording
  const Prediction* prediction = nullptr;        // --to
  const FitLimitResult* fit_limit = nullptr;     // --fit-limit
  const std::vector<CheckRow>* check = nullptr;  // --check
  std::string out;                               // --out, when written
  bool out_is_snapshot = false;                  // a PyTorch snapshot (else a trace)
};

// "2.00x the largest recording (512)"; the factor is to / the largest value.
double ExtrapolationFactor(const ScaleModel& model, uint64_t to);

// One line per member that does not align entirely ("seq16384.pickle (16384):
// 100 allocations (300 events) at 16384 only, the first from attention.py:42 fwd").
std::vector<std::string> AlignmentNotes(const ScaleModel& model);

// The unexplained allocations by the call they come from (CallFrame), most
// first (ties by frame), each with the sizes of its first allocation at
// every value it aligns at: what no form explains, and where to look.
struct UnexplainedGroup {
  std::string frame;  // "" when the recording names none
  uint64_t allocations = 0;
  std::vector<std::pair<uint64_t, uint64_t>> sizes;  // (value, bytes), ascending value
};
std::vector<UnexplainedGroup> UnexplainedGroups(const ScaleModel& model);

std::string ScaleText(const ScaleReport& r);
nlohmann::ordered_json ScaleJson(const ScaleReport& r);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SCALE_REPORT_H_
