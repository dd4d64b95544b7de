// `hbmsim inspect`'s report: the state analysis, the segments with the most
// free space, the largest live blocks and each probe's answer, as text (bytes
// exact, with PyTorch's format_size beside them) and as JSON.
#ifndef HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_
#define HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/inspect/inspect_source.h"
#include "sim/inspect/probe.h"
#include "sim/inspect/state_analysis.h"
#include "sim/report/reserved_explained.h"

namespace hbmsim::inspect {

struct InspectReport {
  std::string file;
  const InspectedState* state = nullptr;
  StateAnalysis analysis;
  ReservedMoment reserved;  // the state's reserved bytes, explained (requested by the blocks' user frames)
  std::vector<ProbeAnswer> probes;
};

// Segments listed in the text (the JSON has them all): those with the most free bytes.
inline constexpr size_t kTextSegments = 20;

// The analysis of `state` and one answer per probe size (each on a copy of it).
InspectReport MakeInspectReport(std::string file, const InspectedState& state,
                                const std::vector<Bytes>& probes, StreamId stream);
// Whether a probe failed (the command then exits 1).
bool AnyProbeFailed(const InspectReport& r);

std::string RenderInspectText(const InspectReport& r);
nlohmann::ordered_json RenderInspectJson(const InspectReport& r);

}  // namespace hbmsim::inspect

#endif  // HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_
