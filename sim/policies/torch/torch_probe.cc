#include "sim/policies/torch/torch_probe.h"

#include <map>

#include "allocator/torch/torch_messages.h"
#include "fmt/format.h"
#include "sim/layer.h"

namespace hbmsim::sim::torch {
namespace {

// Free mapped blocks by address, before the request.
class FreeBlocks : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kFree) by_addr[b.offset.value()] = b.size;
  }
  std::map<uint64_t, Bytes> by_addr;
};

class Steps : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override { events.push_back(e); }
  std::vector<PolicyEvent> events;
};

std::string Describe(const PolicyEvent& e) {
  switch (e.kind) {
    case PolicyEventKind::kRegionAdded:
      return fmt::format("cudaMalloc: a new segment of {} B at {:#x}", e.bytes.value(), e.offset.value());
    case PolicyEventKind::kRegionExtended:
      return fmt::format("segment_map: {} B mapped at {:#x} (an expandable segment grows)", e.bytes.value(),
                         e.offset.value());
    case PolicyEventKind::kRegionReleased:
      return e.detail == torch::kDetailUnmap
                 ? fmt::format("segment_unmap: {} B at {:#x}", e.bytes.value(), e.offset.value())
                 : fmt::format("cudaFree: the cached segment of {} B at {:#x}", e.bytes.value(),
                               e.offset.value());
    case PolicyEventKind::kCacheFlush:
      return fmt::format("release_cached_blocks (the failure ladder's flush) returned {} B", e.bytes.value());
    default:
      return fmt::format("{} {} B at {:#x}", PolicyEventKindName(e.kind), e.bytes.value(), e.offset.value());
  }
}

// Served from a block that was free before: whole, or split.
std::string FromCache(const AllocResult& r, Bytes was) {
  if (was == r.size) {
    return fmt::format(
        "the cached free block at {:#x} of {} B, taken whole ({} B beyond the rounded request)",
        r.offset.value(), was.value(), (r.size - r.rounded).value());
  }
  return fmt::format("split the cached free block at {:#x} of {} B: {} B taken, {} B stay cached at {:#x}",
                     r.offset.value(), was.value(), r.size.value(), (was - r.size).value(),
                     (r.offset + r.size).value());
}

}  // namespace

ProbeAnswer Probe(const torch::TorchAllocator& state, Bytes size, StreamId stream) {
  torch::TorchAllocator copy = state;
  Steps steps;
  copy.set_observer(&steps);
  FreeBlocks before;
  state.WalkMemoryMap(before);
  AllocRequest req;
  req.id = BufferId(~uint64_t{0});
  req.bytes = size;
  req.stream = stream;
  ProbeAnswer a;
  a.requested = size;
  a.stream = stream;
  a.rounded = torch::RoundSize(size, state.options());
  a.small_pool = torch::IsSmallSize(a.rounded);
  a.result = copy.Allocate(req);
  bool new_memory = false;
  for (const PolicyEvent& e : steps.events) {
    a.steps.push_back(Describe(e));
    new_memory |= e.kind == PolicyEventKind::kRegionAdded || e.kind == PolicyEventKind::kRegionExtended;
  }
  if (!a.result.ok()) {
    if (copy.last_oom()) a.oom_message = torch::FormatOutOfMemoryMessage(*copy.last_oom());
    return a;
  }
  if (!a.result.has_offset) {
    a.how = "a zero-byte request: PyTorch returns a null pointer and reserves nothing";
    return a;
  }
  auto was = before.by_addr.find(a.result.offset.value());
  if (was != before.by_addr.end() && !new_memory) {
    a.how = FromCache(a.result, was->second);
  } else if (new_memory) {
    a.how = fmt::format("new memory (see the steps): {} B at {:#x}", a.result.size.value(),
                        a.result.offset.value());
  } else {
    a.how = fmt::format("{} B at {:#x}", a.result.size.value(), a.result.offset.value());
  }
  return a;
}

}  // namespace hbmsim::sim::torch
