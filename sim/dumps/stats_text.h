// The stats block of the text report, in the words of the runtime the policy
// models (the policy's registry row picks one):
//
//   TensorFlowStatsText  TSL's 8-line AllocatorStats::DebugString (REF, the form
//                        TF 2.4-2.17 and jaxlib print), so a simulated dump lines
//                        up with a real one, then PoolBytes/PeakPoolBytes;
//   TorchStatsText       torch.cuda.memory_stats() keys with PyTorch's meanings
//                        (reserved_bytes.all.current is what nvidia-smi shows the
//                        caching allocator holding), then the device capacity.
//
// A value with no bound (kUnlimitedStat) prints as "unlimited", never as a number.
#ifndef HBMSIM_SIM_DUMPS_STATS_TEXT_H_
#define HBMSIM_SIM_DUMPS_STATS_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "allocator/core/allocator.h"
#include "allocator/core/stats.h"
#include "allocator/torch/torch_allocator.h"

namespace hbmsim {

// "Limit:            %20lld\n" ... "LargestFreeBlock: %20lld\n": 8 lines, each
// label left-justified in 18 columns and each value right-aligned in 20. An
// unset or unlimited limit prints "unlimited".
std::string StatsDebugString(const AllocatorStats& s);

// "123" or "unlimited" (kUnlimitedStat).
std::string StatValueText(int64_t v);
// "123 (123B)", "8589934592 (8.00GiB)" or "unlimited".
std::string StatBytesText(int64_t v);

std::string TensorFlowStatsText(const Allocator& a);
std::string TorchStatsText(const torch::TorchAllocator& t);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_DUMPS_STATS_TEXT_H_
