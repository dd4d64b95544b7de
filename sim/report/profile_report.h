// `hbmsim diagnose PROFILE`: the profile's own story per allocator (see
// trace/xplane/profile_summary.h): the peak, what held the memory at the
// peak by tf_op, BFC's fragmentation reading over time. Text, JSON, and a
// self-contained HTML page (--html) with the two curves drawn as SVG.
#ifndef HBMSIM_SIM_REPORT_PROFILE_REPORT_H_
#define HBMSIM_SIM_REPORT_PROFILE_REPORT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/layer.h"
#include "trace/xplane/profile_summary.h"

namespace hbmsim::sim {

std::string RenderProfileText(const xplane::ProfileTrace& t, const std::vector<xplane::AllocatorSummary>& s);
nlohmann::ordered_json RenderProfileJson(const xplane::ProfileTrace& t,
                                         const std::vector<xplane::AllocatorSummary>& s);
std::string RenderProfileHtml(const xplane::ProfileTrace& t, const std::vector<xplane::AllocatorSummary>& s);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_PROFILE_REPORT_H_
