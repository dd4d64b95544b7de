// The HTML report's "Reserved, explained": for each moment of
// ReplayReportInput::reserved_explained (the peak, the first failure, the
// end) one stacked bar of the policy's reserved bytes by cause, and a legend
// table with each part's bytes and share. The figures come from the report
// input as they are (the JSON contract of `reserved_explained`); this file
// only draws them, so the section appears as soon as a replay fills it in.
#ifndef HBMSIM_SIM_VIZ_RESERVED_CHART_H_
#define HBMSIM_SIM_VIZ_RESERVED_CHART_H_

#include <string>

#include "nlohmann/json.hpp"
#include "sim/report/replay_report.h"

namespace hbmsim::sim::viz {

// "" when the input has no reserved_explained.
std::string ReservedSection(const ReplayReportInput& in);

// One moment's bar and legend ({"reserved": N, "parts": [...]}); a moment
// whose parts do not add up to its reserved bytes says so under the bar.
std::string ReservedMoment(const std::string& title, const nlohmann::ordered_json& moment);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_RESERVED_CHART_H_
