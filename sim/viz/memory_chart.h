// The HTML report's "Where the memory went": at the first failure and at the
// peak, one stacked bar of the held bytes by group (tag, or the top user
// frame when nothing is tagged, the op when it differs from the tag), with a
// legend table giving each colour its group, bytes and share; then the
// advice ("What would fit") when the replay has one. Inline SVG, no script.
#ifndef HBMSIM_SIM_VIZ_MEMORY_CHART_H_
#define HBMSIM_SIM_VIZ_MEMORY_CHART_H_

#include <string>

#include "sim/report/replay_report.h"

namespace hbmsim::sim::viz {

// "" when the replay kept no attribution and has no advice.
std::string MemorySection(const ReplayReportInput& in);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_MEMORY_CHART_H_
