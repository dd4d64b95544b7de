// Device presets for a memory limit: `--bytes-limit a100-40gb` is "would it
// fit on that card", one flag instead of a number looked up elsewhere.
//
// Each preset is one documented figure, with what the figure measures and
// where it is published (docs/cli.md, "Device presets", lists them with the
// same sources). Three kinds of figure exist and a row says which it is:
//   cuda-total    what CUDA's cudaDeviceProp::totalGlobalMem reports, which
//                 is torch.cuda.get_device_properties().total_memory
//                 (deviceQuery prints it in bytes);
//   nvml-total    what NVML's memory.total reports (nvidia-smi), in MiB; it
//                 is a little more than cuda-total (A100 40GB: 40960 MiB
//                 against CUDA's 40339 MiB), so a job that fails at it fails
//                 on the card;
//   hbm-per-chip  a Cloud TPU chip's HBM as Google documents it; XLA:TPU
//                 reports the same figure as its capacity ("of 16.00G hbm").
// None of them takes off the CUDA context (a few hundred MiB that neither
// PyTorch nor JAX documents as a number): the limit a job really gets is a
// little below the preset.
#ifndef HBMSIM_SIM_CONFIG_DEVICE_PRESETS_H_
#define HBMSIM_SIM_CONFIG_DEVICE_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"
#include "sim/layer.h"

namespace hbmsim::sim {

struct DevicePreset {
  std::string_view name;    // what --bytes-limit takes: "a100-40gb"
  std::string_view device;  // the device as its vendor names it
  Bytes bytes;
  std::string_view figure;  // "cuda-total", "nvml-total" or "hbm-per-chip"
  std::string_view source;  // where the figure is published
};

// Every preset, in the order `hbmsim presets` lists them.
const std::vector<DevicePreset>& DevicePresets();

// The preset named `name` (case-insensitive), or nullptr.
const DevicePreset* FindDevicePreset(std::string_view name);

// A limit as the user wrote it: a preset name or a size (ParseBytes with
// every unit). `flag` names the option in errors ("--bytes-limit").
struct ParsedLimit {
  Bytes bytes;
  std::string source;  // "--bytes-limit" or "--bytes-limit a100-40gb (NVIDIA A100-SXM4-40GB, cuda-total)"
};
absl::StatusOr<ParsedLimit> ParseLimitOrPreset(std::string_view text, std::string_view flag);

// "a100-40gb, a100-80gb, ..." for help texts and errors.
std::string DevicePresetNames();

// The table `hbmsim presets` prints.
std::string DevicePresetsText();

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_DEVICE_PRESETS_H_
