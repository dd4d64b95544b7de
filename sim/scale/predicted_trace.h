// `scale --out FILE.trace|.hbt`: the prediction as a trace every command
// reads, for recordings that are not PyTorch snapshots (a snapshot's
// prediction is written as the snapshot of its replay, `--out X.pickle`).
// The header keeps what a replay of the template takes from it: the
// allocator (`# allocator:`), its recorded settings as option edits
// (`# allocator_settings:`, those without a space in the value) and the
// limit the recording states (`# device_bytes:`). Recorded addresses and
// shapes are not written (they were of the template's size).
#ifndef HBMSIM_SIM_SCALE_PREDICTED_TRACE_H_
#define HBMSIM_SIM_SCALE_PREDICTED_TRACE_H_

#include <ostream>
#include <string_view>

#include "absl/status/status.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim::scale {

// `format`: "text", "binary" or "binary-zstd" (TraceFormatForPath).
absl::Status WritePredictedTrace(const Scenario& predicted, std::ostream& out, std::string_view format);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_PREDICTED_TRACE_H_
