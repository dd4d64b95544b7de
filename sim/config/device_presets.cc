#include "sim/config/device_presets.h"

#include <algorithm>
#include <cctype>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim {
namespace {

constexpr std::string_view kNvmlTable =
    "NVML memory.total per GPU, thundergolfer.com/blog/nvidia-gpu-memory-capacity "
    "(also github.com/modal-labs/modal-client/pull/2797)";

constexpr uint64_t MiB(uint64_t n) { return n << 20; }
constexpr uint64_t GiB(uint64_t n) { return n << 30; }

bool EqualNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const std::vector<DevicePreset>& DevicePresets() {
  static const std::vector<DevicePreset> kPresets = {
      {"a100-40gb", "NVIDIA A100-SXM4-40GB", Bytes(42298834944), "cuda-total",
       "deviceQuery \"40339 MBytes (42298834944 bytes)\", github.com/bottlerocket-os/bottlerocket/pull/3873"},
      {"a100-80gb", "NVIDIA A100 80GB", Bytes(MiB(81920)), "nvml-total", kNvmlTable},
      {"h100-80gb", "NVIDIA H100 80GB HBM3", Bytes(MiB(81559)), "nvml-total", kNvmlTable},
      {"h200", "NVIDIA H200 141GB", Bytes(MiB(143771)), "nvml-total", kNvmlTable},
      {"l40s", "NVIDIA L40S", Bytes(MiB(46068)), "nvml-total", kNvmlTable},
      {"l4", "NVIDIA L4", Bytes(MiB(23034)), "nvml-total", kNvmlTable},
      {"a10", "NVIDIA A10", Bytes(MiB(23028)), "nvml-total", kNvmlTable},
      {"t4", "Tesla T4", Bytes(15843721216), "cuda-total",
       "deviceQuery \"15110 MBytes (15843721216 bytes)\", chiemon.github.io/2024/12/25/显卡信息.html"},
      {"tpu-v4", "Cloud TPU v4 chip", Bytes(GiB(32)), "hbm-per-chip", "cloud.google.com/tpu/docs/v4"},
      {"tpu-v5e", "Cloud TPU v5e chip", Bytes(GiB(16)), "hbm-per-chip",
       "cloud.google.com/tpu/docs/v5e (\"HBM2 capacity 16 GB\"; XLA:TPU says \"of 16.00G hbm\")"},
      {"tpu-v5p", "Cloud TPU v5p chip", Bytes(GiB(95)), "hbm-per-chip", "cloud.google.com/tpu/docs/v5p"},
      {"tpu-v6e", "Cloud TPU v6e (Trillium) chip", Bytes(GiB(32)), "hbm-per-chip",
       "cloud.google.com/tpu/docs/v6e"},
  };
  return kPresets;
}

const DevicePreset* FindDevicePreset(std::string_view name) {
  for (const DevicePreset& p : DevicePresets()) {
    if (EqualNoCase(p.name, name)) return &p;
  }
  return nullptr;
}

std::string DevicePresetNames() {
  std::string out;
  for (const DevicePreset& p : DevicePresets()) out += fmt::format("{}{}", out.empty() ? "" : ", ", p.name);
  return out;
}

absl::StatusOr<ParsedLimit> ParseLimitOrPreset(std::string_view text, std::string_view flag) {
  if (const DevicePreset* p = FindDevicePreset(text)) {
    return ParsedLimit{p->bytes, fmt::format("{} {} ({}, {})", flag, p->name, p->device, p->figure)};
  }
  absl::StatusOr<Bytes> b = ParseBytes(text, /*allow_more_units=*/true);
  if (!b.ok()) {
    // A word that is no size is most likely a device name: list the ones there are.
    const bool word = !text.empty() && std::isalpha(static_cast<unsigned char>(text.front()));
    return absl::InvalidArgumentError(
        word ? fmt::format("{} {}: not a size and not a device preset (hbmsim presets lists them: {})", flag,
                           text, DevicePresetNames())
             : fmt::format("{} {}: {}", flag, text, std::string(b.status().message())));
  }
  // TF logs print MiB as "MB": a number copied with "MB" gets a note saying so.
  const std::string note = DecimalUnitNote(text);
  return ParsedLimit{*b, note.empty() ? std::string(flag) : fmt::format("{}, {}", flag, note)};
}

std::string DevicePresetsText() {
  std::string out = fmt::format("{:<10} {:>15} {:>10}  {:<13} {:<30} {}\n", "preset", "bytes", "", "figure",
                                "device", "source");
  for (const DevicePreset& p : DevicePresets()) {
    out += fmt::format("{:<10} {:>15} {:>10}  {:<13} {:<30} {}\n", p.name, p.bytes.value(),
                       HumanReadableNumBytes(p.bytes), p.figure, p.device, p.source);
  }
  out +=
      "\ncuda-total: torch.cuda.get_device_properties().total_memory (CUDA's totalGlobalMem); nvml-total: "
      "nvidia-smi's memory.total, a little more than cuda-total;\nhbm-per-chip: the chip's HBM as Google "
      "documents it. None takes off the CUDA context, so a job gets a little less than its preset.\n"
      "Use one as --bytes-limit NAME (replay, size, advise, compare, inspect).\n";
  return out;
}

}  // namespace hbmsim::sim
