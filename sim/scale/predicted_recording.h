// The recording at a size nobody ran: the template's events (sim/scale/
// member_stream.h) with each alloc's requested size replaced by the
// prediction, as a Recording, so it opens into a Scenario and replays through
// ScenarioRun like any file, and every report reads it.
//
// What it keeps of the template: the format (so the allocator that wrote it
// is chosen again), metadata, settings, the limit the recording states (or
// the capacity its recorded OOM implies: the device does not change with the
// job's size), stacks and labels, stream, time and order. What it drops:
// recorded addresses and shapes (they were of the other size), the
// allocator's own calls and OOMs (a replay finds its own), and the start
// state's segments when a start-state block's size changes (then the blocks
// are placed through the policy: ScenarioRequest start_state = place).
//
// Unless `carry_cache`: then the template's segments are kept as recorded
// and only the blocks that change size are freed in them and placed through
// the policy by their own allocs. That is right when the cache is history the
// job at N inherits as well (the sizes ran one after another in one process,
// scale_model.h StartStatesNested), wrong when it was the template's own
// warm-up (its segments are of the template's size).
#ifndef HBMSIM_SIM_SCALE_PREDICTED_RECORDING_H_
#define HBMSIM_SIM_SCALE_PREDICTED_RECORDING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/layer.h"
#include "sim/scale/member_stream.h"
#include "sim/scenario/scenario.h"
#include "trace/formats/recording.h"

namespace hbmsim::sim::scale {

struct PredictedScenario {
  Scenario scenario;
  bool start_state_kept = true;  // false: a start-state block changed size
  bool cache_carried = false;    // with a block resized: the segments kept, the resized blocks placed
  uint64_t start_blocks_resized = 0;
  uint64_t start_blocks = 0;
};

// `alloc_bytes`: the requested size of each of the template's allocs.
// `name` names the prediction in reports ("prediction at 1024").
absl::StatusOr<PredictedScenario> MakePredictedScenario(std::shared_ptr<const MemberStream> templ,
                                                        std::vector<uint64_t> alloc_bytes, std::string name,
                                                        bool carry_cache = false);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_PREDICTED_RECORDING_H_
