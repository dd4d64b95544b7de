// What the `torch` policy takes from a PyTorch snapshot (RecordingHooks):
//
//   recorded_options  allocator_settings and PYTORCH_CUDA_ALLOC_CONF as torch
//                     options (expandable_segments, max_split_size, ...), and
//                     the device as device_index (the OOM text names it)
//   seed              the segments held at the trace start, installed with
//                     TorchAllocator::SeedSegment; their live blocks come back
//                     with their recorded addresses
//   empty_cache       torch.cuda.empty_cache(): release_cached_blocks()
//   oom_message       PyTorch's OutOfMemoryError text for the last failure
//   settings_of       the options that ran as a snapshot's allocator_settings
//   summary_text      torch.cuda.memory_summary() at the end of a replay
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "allocator/torch/torch_messages.h"
#include "allocator/torch/torch_options.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/policies/torch/torch_option_names.h"

namespace hbmsim::sim {
namespace {

using Edits = std::vector<OptionEdit>;

// "[1:0,2:4,...]" when any interval divides; PyTorch's all-zero default says nothing.
std::string DivisionsConf(const RecordedSettings& s) {
  bool any = false;
  std::string list;
  for (const auto& [mib, divisions] : s.roundup_power2_divisions) {
    any = any || divisions > 1;
    list += fmt::format("{}{}:{}", list.empty() ? "" : ",", mib, divisions);
  }
  return any ? fmt::format("roundup_power2_divisions:[{}]", list) : "";
}

// What the conf string sets, with the typed fields of allocator_settings
// (the allocator's own view after parsing) taking precedence.
torch::TorchConfDelta SettingsDelta(const RecordedSettings& s) {
  torch::TorchConfDelta d;
  if (absl::StatusOr<torch::TorchConfDelta> parsed = torch::ParseAllocConf(s.alloc_conf); parsed.ok()) {
    d = *parsed;
  }
  if (s.expandable_segments) d.expandable_segments = *s.expandable_segments;
  if (s.max_split_size && *s.max_split_size > 0) d.max_split_size = Bytes(*s.max_split_size);
  if (s.garbage_collection_threshold) d.garbage_collection_threshold = *s.garbage_collection_threshold;
  return d;
}

Edits RecordedOptions(const RecordedSettings& s, DeviceId device) {
  Edits out;
  // A device id past int64's range is no device_index (the option refuses it).
  if (device.value() <= uint64_t{INT64_MAX})
    out.push_back({TorchOption::kDeviceIndex, static_cast<int64_t>(device.value())});
  const torch::TorchConfDelta d = SettingsDelta(s);
  if (d.expandable_segments) out.push_back({TorchOption::kExpandableSegments, *d.expandable_segments});
  if (d.max_split_size && *d.max_split_size != Bytes(torch::kUnlimited)) {
    out.push_back({TorchOption::kMaxSplitSize, *d.max_split_size});
  }
  if (d.max_non_split_rounding) out.push_back({TorchOption::kMaxNonSplitRounding, *d.max_non_split_rounding});
  if (d.large_segment_size) out.push_back({TorchOption::kLargeSegmentSize, *d.large_segment_size});
  if (d.garbage_collection_threshold) {
    out.push_back({TorchOption::kGarbageCollectionThreshold, *d.garbage_collection_threshold});
  }
  if (std::string conf = DivisionsConf(s); !conf.empty())
    out.push_back({TorchOption::kAllocConf, std::move(conf)});
  return out;
}

BlockState SeedState(const StartBlock& b) {
  if (!b.live) return BlockState::kFree;
  return b.pending_free ? BlockState::kPendingFree : BlockState::kInUse;
}

torch::SegmentSeed ToSeed(const StartSegment& s) {
  torch::SegmentSeed seed;
  seed.base = s.address;
  seed.size = s.size;
  seed.stream = s.stream;
  seed.expandable = s.expandable;
  seed.small_pool = s.small;
  for (const StartBlock& b : s.blocks) seed.blocks.push_back({b.size, b.requested, SeedState(b), BufferId(b.id)});
  return seed;
}

// `a` was built by MakeTorch (the hooks are registered with that factory).
absl::StatusOr<std::vector<SeededBlock>> Seed(Allocator& a, const std::vector<StartSegment>& segments) {
  auto& torch = static_cast<torch::TorchAllocator&>(a);
  std::vector<SeededBlock> out;
  for (const StartSegment& seg : segments) {
    absl::StatusOr<std::vector<Handle>> handles = torch.SeedSegment(ToSeed(seg));
    if (!handles.ok()) {
      return absl::InvalidArgumentError(fmt::format("initial segment at {:#x}: {}", seg.address.value(),
                                                    std::string(handles.status().message())));
    }
    size_t next = 0;  // SeedSegment returns the live blocks in address order
    for (const StartBlock& b : seg.blocks) {
      if (!b.live) continue;
      AllocResult r;
      r.handle = (*handles)[next++];
      r.has_offset = true;
      r.offset = b.address;
      r.size = b.size;
      r.rounded = b.size;
      out.push_back({b.id, r});
    }
  }
  return out;
}

// PYTORCH_CUDA_ALLOC_CONF for the options that differ from PyTorch's
// defaults, in its own key syntax (CUDAAllocatorConfig): "" when none do.
std::string AllocConf(const torch::TorchOptions& o) {
  const torch::TorchOptions defaults;
  std::vector<std::string> keys;
  if (o.expandable_segments) keys.push_back("expandable_segments:True");
  if (o.max_split_size != defaults.max_split_size) {
    keys.push_back(fmt::format("max_split_size_mb:{}", o.max_split_size.value() >> 20));
  }
  if (o.max_non_split_rounding != defaults.max_non_split_rounding) {
    keys.push_back(fmt::format("max_non_split_rounding_mb:{}", o.max_non_split_rounding.value() >> 20));
  }
  if (o.garbage_collection_threshold != defaults.garbage_collection_threshold) {
    keys.push_back(fmt::format("garbage_collection_threshold:{}", o.garbage_collection_threshold));
  }
  if (o.roundup_power2_divisions != defaults.roundup_power2_divisions) {
    std::string list;
    for (int i = 0; i < torch::kRoundupIntervals; ++i) {
      list += fmt::format("{}{}:{}", i == 0 ? "" : ",", uint64_t{1} << i, o.roundup_power2_divisions[i]);
    }
    keys.push_back(fmt::format("roundup_power2_divisions:[{}]", list));
  }
  std::string conf;
  for (const std::string& k : keys) conf += (conf.empty() ? "" : ",") + k;
  return conf;
}

// torch.cuda.memory._snapshot()["allocator_settings"] for the options the
// run used; the host-side keys PyTorch writes carry their defaults.
nlohmann::ordered_json SettingsOf(const Allocator& a) {
  const torch::TorchOptions& o = static_cast<const torch::TorchAllocator&>(a).options();
  nlohmann::ordered_json divisions = nlohmann::ordered_json::object();
  for (int i = 0; i < torch::kRoundupIntervals; ++i) {
    divisions[fmt::format("{}", uint64_t{1} << i)] = o.roundup_power2_divisions[i];
  }
  const bool unlimited = o.max_split_size == Bytes(torch::kUnlimited);
  return {{"PYTORCH_CUDA_ALLOC_CONF", AllocConf(o)},
          {"max_split_size", unlimited ? int64_t{-1} : static_cast<int64_t>(o.max_split_size.value())},
          {"garbage_collection_threshold", o.garbage_collection_threshold},
          {"expandable_segments", o.expandable_segments},
          {"pinned_num_register_threads", 1},
          {"release_lock_on_cudamalloc", false},
          {"pinned_use_cuda_host_register", false},
          {"roundup_power2_divisions", std::move(divisions)}};
}

std::string OomMessage(const Allocator& a) {
  const auto& torch = static_cast<const torch::TorchAllocator&>(a);
  return torch.last_oom() ? torch::FormatOutOfMemoryMessage(*torch.last_oom()) : "";
}

}  // namespace

RecordingHooks TorchRecordingHooks();
RecordingHooks TorchRecordingHooks() {
  RecordingHooks hooks;
  hooks.made_formats = {TraceFormat::kTorchSnapshot};  // torch.cuda.memory._snapshot()
  hooks.recorded_options = RecordedOptions;
  hooks.seed = Seed;
  hooks.empty_cache = [](Allocator& a) { static_cast<torch::TorchAllocator&>(a).EmptyCache(); };
  hooks.oom_message = OomMessage;
  hooks.settings_of = SettingsOf;
  hooks.summary_text = [](const Allocator& a) {
    const auto& torch = static_cast<const torch::TorchAllocator&>(a);
    return fmt::format("memory_summary() at the end of the replay:\n{}",
                       torch::FormatMemorySummary(torch.torch_stats(), torch.options().device_index));
  };
  return hooks;
}

}  // namespace hbmsim::sim
