// The steps of `hbmsim scale` every mode shares: open each recording as a
// Scenario and read its stream, build the model (sim/scale/scale_model.h),
// and predict + replay at one value of the size parameter.
#ifndef HBMSIM_SIM_SCALE_SCALE_PREDICT_H_
#define HBMSIM_SIM_SCALE_SCALE_PREDICT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/config/allocator_config.h"
#include "sim/scale/predicted_recording.h"
#include "sim/scale/scale_model.h"
#include "sim/scale/scale_run.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"

namespace hbmsim::sim::scale {

struct MemberInput {
  uint64_t value = 0;
  std::string path;
};

// Opens and reads each recording. Errors name the file (bad input).
absl::StatusOr<std::vector<std::shared_ptr<const MemberStream>>> OpenMembers(
    const std::vector<MemberInput>& inputs, const ScenarioRequest& request);

struct Prediction {
  uint64_t to = 0;
  PredictedScenario predicted;
  LimitChoice limit;
  ScaleRunResult run;
  uint64_t unextended = 0;            // fitted allocs whose fit gives no size at `to` (kept as recorded)
  std::vector<uint64_t> alloc_bytes;  // the template's allocs at `to`
};

// Synthesizes the recording at `n` and replays it under `config` at the limit
// `limit_flag` resolves to (--bytes-limit; "" for the recorded one, else unlimited).
absl::StatusOr<Prediction> PredictAt(const ScaleModel& model, const AllocatorConfig& config,
                                     std::string_view limit_flag, uint64_t n, const ScaleRunOptions& options);

// The replay of one real recording at the limit `limit_flag` resolves to, as
// `hbmsim replay` runs it: what a prediction is compared with.
absl::StatusOr<ScaleRunResult> ReplayMember(const MemberStream& member, const AllocatorConfig& config,
                                            std::string_view limit_flag);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SCALE_PREDICT_H_
