// `hbmsim inspect`'s report: the policy's own analysis of the state
// (PolicySpec::state_analysis: e.g. a caching allocator's pools, free memory
// and segments in its runtime's terms), the largest live blocks with their recorded stacks,
// the reserved bytes explained and each probe's answer, as text and JSON.
#ifndef HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_
#define HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/config/state_view.h"
#include "sim/inspect/inspect_source.h"
#include "sim/report/reserved_explained.h"

namespace hbmsim::sim::inspect {

struct InspectReport {
  std::string file;
  const InspectedState* state = nullptr;
  StateView view;  // the policy's own analysis (PolicySpec::state_analysis)
  ReservedMoment reserved;  // the state's reserved bytes, explained (requested by the blocks' user frames)
  std::vector<ProbeView> probes;
};

// The analysis of `state` and one answer per probe size (each on a copy of it).
InspectReport MakeInspectReport(std::string file, const InspectedState& state,
                                const std::vector<Bytes>& probes, StreamId stream);
// Whether a probe failed (the command then exits 1).
bool AnyProbeFailed(const InspectReport& r);

std::string RenderInspectText(const InspectReport& r);
nlohmann::ordered_json RenderInspectJson(const InspectReport& r);

}  // namespace hbmsim::sim::inspect

#endif  // HBMSIM_SIM_INSPECT_INSPECT_REPORT_H_
