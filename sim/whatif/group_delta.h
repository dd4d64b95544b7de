// `compare --baseline A --candidate B`: where the memory went at each
// recording's peak of live bytes, and the change per group (tag, op, top user
// frame), so a regression is named by the user's own labels ("act_l3 +64MiB")
// and not only as a total.
//
// The peak is the recording's own, the same for every allocator: the held
// bytes are what the user's code asked for (sim/report/memory_attribution.h),
// taken by replaying with the live-bytes bound (PolicySpec::bounds_live_bytes) and no limit, where nothing fails.
#ifndef HBMSIM_SIM_WHATIF_GROUP_DELTA_H_
#define HBMSIM_SIM_WHATIF_GROUP_DELTA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/report/memory_attribution.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim {

// The breakdown at the peak of live bytes; an empty one when nothing was held.
absl::StatusOr<MemoryBreakdown> PeakLiveBreakdown(const Scenario& scenario);

struct GroupDelta {
  std::string key;
  int64_t baseline = 0, candidate = 0;  // bytes held by the group at each peak
};

// Every key of either side, largest |candidate - baseline| first (ties by key).
std::vector<GroupDelta> GroupDeltas(const std::vector<MemoryGroup>& baseline,
                                    const std::vector<MemoryGroup>& candidate);

// "Where the memory went at the peak, baseline -> candidate": a table per
// grouping that has labels (by tag; by op when it differs; by frame when any),
// the top `rows` changes, the rest summed.
std::string GroupDeltaText(const MemoryBreakdown& baseline, const MemoryBreakdown& candidate, size_t rows = 10);
// {"baseline_peak_event", "candidate_peak_event", "by_tag": [{"key", "baseline", "candidate", "delta"}], "by_op",
// "by_frame"}.
nlohmann::ordered_json GroupDeltaJson(const MemoryBreakdown& baseline, const MemoryBreakdown& candidate);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_GROUP_DELTA_H_
