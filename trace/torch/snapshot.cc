#include "trace/torch/snapshot.h"

namespace hbmsim::trace {

std::string_view TraceActionName(TraceAction a) {
  switch (a) {
    case TraceAction::kAlloc:
      return "alloc";
    case TraceAction::kFreeRequested:
      return "free_requested";
    case TraceAction::kFreeCompleted:
      return "free_completed";
    case TraceAction::kFree:
      return "free";
    case TraceAction::kSegmentAlloc:
      return "segment_alloc";
    case TraceAction::kSegmentFree:
      return "segment_free";
    case TraceAction::kSegmentMap:
      return "segment_map";
    case TraceAction::kSegmentUnmap:
      return "segment_unmap";
    case TraceAction::kSnapshot:
      return "snapshot";
    case TraceAction::kOom:
      return "oom";
    case TraceAction::kOther:
      return "other";
  }
  return "?";
}

const std::string* AllocatorSettings::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace hbmsim::trace
