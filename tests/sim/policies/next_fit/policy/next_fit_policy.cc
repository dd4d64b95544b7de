// The `next_fit` row, as a new policy's sim/policies/<p>/ folder would hold
// it: options, factory, its failure text, its state analysis for inspect
// and one advice row. It leaves `size`'s fast path unset, so its trials
// replay plainly (SharedTrialSupport), and every other text is the generic one.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/config/policy_registry.h"
#include "sim/dumps/failure_texts.h"
#include "sim/dumps/memory_map_text.h"
#include "sim/policies/core/for_policy.h"
#include "tests/sim/policies/next_fit/allocator/next_fit_allocator.h"

namespace hbmsim::sim {
namespace {

std::string NextFitFailureText(const NextFitAllocator& a, const FailureRecord& f) {
  return fmt::format("next_fit: no free block of {} B after the cursor or before it\n{}", f.rounded.value(),
                     MemoryMapText(a));
}

// The free blocks and the largest live ones, from the memory map.
class NextFitWalk : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kFree) {
      ++free_blocks;
      free += b.size.value();
    } else {
      live.push_back({b.offset, b.size, b.requested, b.stream, false, Offset(0)});
    }
  }
  uint64_t free_blocks = 0;
  uint64_t free = 0;
  std::vector<LiveBlockView> live;
};

StateView NextFitStateView(const Allocator& a) {
  NextFitWalk walk;
  a.WalkMemoryMap(walk);
  StateView view;
  view.text = fmt::format("\nFree memory (next fit): {} B in {} blocks\n", walk.free, walk.free_blocks);
  view.json = {{"free", walk.free}, {"free_blocks", walk.free_blocks}};
  std::stable_sort(walk.live.begin(), walk.live.end(),
                   [](const LiveBlockView& x, const LiveBlockView& y) { return x.size > y.size; });
  view.biggest = std::move(walk.live);
  return view;
}

ProbeView NextFitProbe(const Allocator& a, Bytes size, StreamId stream) {
  NextFitAllocator copy = static_cast<const NextFitAllocator&>(a);  // built by the row's factory
  AllocRequest req;
  req.bytes = size;
  req.stream = stream;
  ProbeView p;
  p.requested = size;
  p.requested_text = fmt::format("{} B", size.value());
  p.stream = stream;
  p.pool = "whole";
  p.result = copy.Allocate(req);
  p.rounded = p.result.rounded;
  if (p.result.ok()) p.how = fmt::format("the next free block that fits, at {:#x}", p.result.offset.value());
  return p;
}

// next_fit's one option, its name written once (option.h's handles).
constexpr OptionName<Bytes> kNextFitAlignment{"alignment"};

}  // namespace

absl::Status RegisterNextFitPolicy(PolicyRegistry& registry);
absl::Status RegisterNextFitPolicy(PolicyRegistry& registry) {
  OptionTable<NextFitOptions> t;
  t.Limit(&NextFitOptions::memory_limit);
  t.Add(kNextFitAlignment, &NextFitOptions::alignment, "requests are rounded up to a multiple of this",
        AtLeastOneByte);
  PolicySpec spec = MakePolicySpec<NextFitOptions>(
      "next_fit", "test policy: next fit from the last placement, one region of the whole limit", std::move(t),
      [](const NextFitOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<NextFitAllocator>(o);
      });
  spec.texts.at_failure = ForPolicy(NextFitFailureText, GenericFailureText);
  spec.state_analysis = {NextFitStateView, NextFitProbe};
  spec.advice = {{"", {{kNextFitAlignment, Bytes(4096)}}, "next_fit with 4 KiB alignment (a test setting)"}};
  return registry.Register(std::move(spec));
}

}  // namespace hbmsim::sim
