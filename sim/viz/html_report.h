// `hbmsim replay --html report.html`: one self-contained page (inline SVG and
// CSS, no script, nothing fetched from the network) with
//   - the timeline over event index of live requested bytes, bytes in use,
//     pool bytes and the largest free block, drawn as min/max bands per column
//     (timeline.h), failures, defragmentations and evictions marked;
//   - the address map at the first failure and at the peak (address_map.h);
//   - the stats and failure tables of the text report.
// It is well-formed XML (XHTML syntax), so tests can parse it; every series
// carries its exact peak as data-peak.
#ifndef HBMSIM_SIM_VIZ_HTML_REPORT_H_
#define HBMSIM_SIM_VIZ_HTML_REPORT_H_

#include <string>

#include "sim/report/replay_report.h"
#include "sim/viz/viz_recorder.h"

namespace hbmsim::sim::viz {

std::string HtmlReport(const VizRecorder& viz, const ReplayReportInput& report);

// The SVG pieces, exposed for tests.
std::string TimelineSvg(const Timeline& t);
std::string AddressMapSvg(const AddressMap& m);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_HTML_REPORT_H_
