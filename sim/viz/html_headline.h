// The first thing the HTML report says: the verdict as one or two plain
// sentences, in human units, before any table ("3 of 40 allocations failed
// ... The first asked for 5.00GiB when 91.25MiB was free: the device was
// full."). The text report's verdict paragraph, with every byte count, follows
// it on the page.
#ifndef HBMSIM_SIM_VIZ_HTML_HEADLINE_H_
#define HBMSIM_SIM_VIZ_HTML_HEADLINE_H_

#include <string>

#include "sim/report/replay_report.h"

namespace hbmsim::sim::viz {

// Plain text (the caller escapes it), ending without a newline.
std::string HeadlineText(const ReplayReportInput& in);

// The allocator's options that differ from its defaults, "key=value ...",
// or "its defaults" when none does: an option at its default says nothing.
std::string ChangedOptionsText(const AllocatorConfig& config);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_HTML_HEADLINE_H_
