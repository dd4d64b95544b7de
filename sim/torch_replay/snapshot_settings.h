// A snapshot's recorded allocator_settings and device as the `torch` policy's
// defaults, and the device capacity a recording with an `oom` entry implies.
#ifndef HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_SETTINGS_H_
#define HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_SETTINGS_H_

#include <string>
#include <vector>

#include "sim/config/allocator_config.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {

// Sets the torch options the snapshot recorded (allocator_settings and its
// PYTORCH_CUDA_ALLOC_CONF: expandable_segments, max_split_size,
// garbage_collection_threshold, roundup_power2_divisions, ...) and
// device_index, on every option still at its default: a YAML config's values
// and, applied afterwards by the caller, --set win. Returns "key=value" for
// each option set. Does nothing for other policies.
std::vector<std::string> ApplySnapshotSettings(const std::optional<RecordedSettings>& settings,
                                               DeviceId device, AllocatorConfig& config);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_SETTINGS_H_
