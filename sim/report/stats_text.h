// AllocatorStats as text: TSL's 8-line AllocatorStats::DebugString (REF, the
// form TF 2.4-2.17 and jaxlib print), so a simulated dump lines up with a real one.
#ifndef HBMSIM_SIM_REPORT_STATS_TEXT_H_
#define HBMSIM_SIM_REPORT_STATS_TEXT_H_

#include <string>

#include "allocator/core/stats.h"

namespace hbmsim {

// "Limit:            %20lld\n" ... "LargestFreeBlock: %20lld\n": 8 lines, each
// label left-justified in 18 columns and each value right-aligned in 20.
std::string StatsDebugString(const AllocatorStats& s);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_REPORT_STATS_TEXT_H_
