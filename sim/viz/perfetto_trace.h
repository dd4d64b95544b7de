// `hbmsim replay --perfetto trace.json`: Chrome trace-event JSON that
// ui.perfetto.dev and chrome://tracing open. Time is the event index: one
// trace event = 1 µs on the viewer's axis, so "ts" reads as the event number.
//   - counter tracks ("ph":"C") bytes_in_use, pool_bytes, largest_free_block,
//     live_requested, from the Timeline's columns: each column contributes its
//     max at its first event and its min half-way through, so the output is
//     bounded (≤ 2 × 1200 points per track) and the maximum is exact;
//   - instant events ("ph":"i") for failures and every policy event
//     (defragmentations, evictions, region growth...);
//   - each `mark` as a slice ("ph":"X") lasting until the next mark.
#ifndef HBMSIM_SIM_VIZ_PERFETTO_TRACE_H_
#define HBMSIM_SIM_VIZ_PERFETTO_TRACE_H_

#include <string_view>

#include "nlohmann/json.hpp"
#include "sim/viz/viz_recorder.h"

namespace hbmsim::sim::viz {

nlohmann::ordered_json PerfettoTrace(const VizRecorder& viz, std::string_view allocator_name);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_PERFETTO_TRACE_H_
