// The stats block of the text report when a policy's row names none of its
// own (sim/policies/<p>/ holds those): TensorFlowStatsText, TSL's 8-line
// AllocatorStats::DebugString (REF, the form TF 2.4-2.17 and jaxlib print),
// so a simulated dump lines up with a real one, then PoolBytes/PeakPoolBytes.
// Every Allocator has AllocatorStats, so every policy can be shown this way.
//
// A value with no bound (kUnlimitedStat) prints as "unlimited", never as a number.
#ifndef HBMSIM_SIM_DUMPS_STATS_TEXT_H_
#define HBMSIM_SIM_DUMPS_STATS_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "allocator/core/allocator.h"
#include "allocator/core/stats.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// "Limit:            %20lld\n" ... "LargestFreeBlock: %20lld\n": 8 lines, each
// label left-justified in 18 columns and each value right-aligned in 20. An
// unset or unlimited limit prints "unlimited".
std::string StatsDebugString(const AllocatorStats& s);

// "123" or "unlimited" (kUnlimitedStat).
std::string StatValueText(int64_t v);
// "123 (123B)", "8589934592 (8.00GiB)" or "unlimited".
std::string StatBytesText(int64_t v);

std::string TensorFlowStatsText(const Allocator& a);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_DUMPS_STATS_TEXT_H_
