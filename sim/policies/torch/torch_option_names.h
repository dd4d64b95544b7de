// The `torch` policy's options, each name written once (under
// PYTORCH_CUDA_ALLOC_CONF's own key names where it has one): torch_policy.cc
// declares them in its table and lists its advice with them, and
// torch_recording.cc turns a snapshot's allocator_settings into them. A
// header because those are two files of one row.
#ifndef HBMSIM_SIM_POLICIES_TORCH_TORCH_OPTION_NAMES_H_
#define HBMSIM_SIM_POLICIES_TORCH_TORCH_OPTION_NAMES_H_

#include <cstdint>
#include <string>

#include "allocator/core/units.h"
#include "sim/config/option.h"
#include "sim/layer.h"

namespace hbmsim::sim {

struct TorchOption {
  static constexpr OptionName<std::string> kAllocConf{"alloc_conf"};
  static constexpr OptionName<bool> kExpandableSegments{"expandable_segments"};
  static constexpr OptionName<Bytes> kMaxSplitSize{"max_split_size"};
  static constexpr OptionName<Bytes> kMaxNonSplitRounding{"max_non_split_rounding"};
  static constexpr OptionName<Bytes> kLargeSegmentSize{"large_segment_size"};
  static constexpr OptionName<double> kGarbageCollectionThreshold{"garbage_collection_threshold"};
  static constexpr OptionName<double> kPerProcessMemoryFraction{"per_process_memory_fraction"};
  static constexpr OptionName<int64_t> kDeviceIndex{"device_index"};
  static constexpr OptionName<bool> kFixedRetrySearch{"fixed_retry_search"};
  static constexpr OptionName<std::string> kRoundupPower2Divisions{"roundup_power2_divisions"};
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_POLICIES_TORCH_TORCH_OPTION_NAMES_H_
