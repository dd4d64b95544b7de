// Registry entries of the baselines and lower bounds (allocator/baselines/):
// first_fit, best_fit, paged, ideal and offline. They exist to be compared
// with the real policies (`hbmsim compare`, `hbmsim size`).
//
// `offline` needs the whole future of the trace. `size` and `compare` plan it
// from the trace they already hold in memory; under `replay` its factory reads
// the trace named by its `trace` option first (a first pass over the file,
// memory proportional to the trace's buffers) and the replay is the second.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "allocator/baselines/fit_allocator.h"
#include "allocator/baselines/ideal_allocator.h"
#include "allocator/baselines/offline_allocator.h"
#include "allocator/baselines/paged_allocator.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/engine/open_trace.h"

namespace hbmsim {
namespace {

std::string AtLeastOneByte(const OptionValue& v) {
  return std::get<Bytes>(v).is_zero() ? "must be at least 1 byte" : "";
}

// The limit alone: `ideal` has no option.
struct LimitOnly {
  Bytes limit;
};

// `offline`'s options: the planner's alignment and, under replay, the trace
// to plan from.
struct OfflineRowOptions {
  Bytes limit;
  Bytes alignment{256};
  std::string trace;
};

// Tracks one device's live buffers (programs in their own id space) and
// closes an interval at each free.
class IntervalCollector {
 public:
  void Add(const Event& e, uint64_t index) {
    const bool program = IsProgramEvent(e.kind);
    auto& open = program ? programs_ : buffers_;
    if (e.kind == EventKind::kAlloc || e.kind == EventKind::kProgramLoad) {
      if (!e.bytes.is_zero()) open[e.id] = intervals_.size();
      if (!e.bytes.is_zero()) intervals_.push_back({index, e.bytes.value(), index, UINT64_MAX});
      return;
    }
    if (e.kind == EventKind::kFree || e.kind == EventKind::kFreeCompleted ||
        e.kind == EventKind::kProgramUnload) {
      auto it = open.find(e.id);
      if (it == open.end()) return;
      intervals_[it->second].end = index;
      open.erase(it);
    }
  }
  std::vector<BufferInterval> Take() { return std::move(intervals_); }

 private:
  std::vector<BufferInterval> intervals_;
  absl::flat_hash_map<uint64_t, size_t> buffers_, programs_;
};

// The live intervals of the first event's device in `path`, keyed by the
// event index of each alloc, as the replay numbers events (program_load: a
// buffer of its own id space). Zero-byte allocs take no space.
absl::StatusOr<std::vector<BufferInterval>> ReadBufferIntervals(const std::string& path) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = OpenTrace(path);
  if (!reader.ok()) return reader.status();
  IntervalCollector collector;
  std::optional<DeviceId> device;
  Event e;
  for (uint64_t index = 0;; ++index) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (!device) device = e.device;
    if (e.device == *device) collector.Add(e, index);
  }
  return collector.Take();
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeOffline(const OfflineRowOptions& o) {
  if (o.trace.empty()) {
    return absl::InvalidArgumentError(
        "offline needs the whole future: pass --set trace=PATH (the same trace; it is read twice)");
  }
  absl::StatusOr<std::vector<BufferInterval>> intervals = ReadBufferIntervals(o.trace);
  if (!intervals.ok()) return intervals.status();
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(*intervals, o.alignment.value()));
  return std::make_unique<OfflineAllocator>(std::move(plan), o.limit);
}

void RegisterFitPolicy(PolicyRegistry& registry, std::string name, std::string summary, FitStrategy strategy) {
  OptionTable<FitOptions> t;
  t.Limit(&FitOptions::memory_limit);
  t.Add("alignment", &FitOptions::alignment, "requests are rounded up to a multiple of this", AtLeastOneByte);
  (void)registry.Register(MakePolicySpec<FitOptions>(
      std::move(name), std::move(summary), std::move(t),
      [strategy](const FitOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        FitOptions with_strategy = o;
        with_strategy.strategy = strategy;
        return std::make_unique<FitAllocator>(with_strategy);
      }));
}

}  // namespace

void RegisterBaselinePolicies(PolicyRegistry& registry);
void RegisterBaselinePolicies(PolicyRegistry& registry) {
  RegisterFitPolicy(registry, "first_fit",
                    "baseline: address-ordered first fit, eager coalescing, one region of the whole limit",
                    FitStrategy::kFirstFit);
  RegisterFitPolicy(registry, "best_fit",
                    "baseline: exact best fit by (size, address), no bins, one region of the whole limit",
                    FitStrategy::kBestFit);

  OptionTable<PagedOptions> paged;
  paged.Limit(&PagedOptions::memory_limit);
  paged.Add("page_size", &PagedOptions::page_size, "a request takes whole pages, wherever they are free",
            AtLeastOneByte);
  (void)registry.Register(MakePolicySpec<PagedOptions>(
      "paged", "baseline: physical memory fungible in pages (cuda_malloc_async / expandable-segments-like pool)",
      std::move(paged), [](const PagedOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<PagedAllocator>(o);
      }));

  OptionTable<LimitOnly> ideal;
  ideal.Limit(&LimitOnly::limit);
  (void)registry.Register(MakePolicySpec<LimitOnly>(
      "ideal", "lower bound: fits whenever live requested bytes <= limit (no placement)", std::move(ideal),
      [](const LimitOnly& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<IdealAllocator>(o.limit);
      }));

  OptionTable<OfflineRowOptions> offline;
  offline.Limit(&OfflineRowOptions::limit);
  offline.Add("alignment", &OfflineRowOptions::alignment, "planned blocks are rounded up to a multiple of this",
              AtLeastOneByte);
  offline.Add("trace", &OfflineRowOptions::trace, "under replay: the trace to plan from (the one replayed)");
  (void)registry.Register(MakePolicySpec<OfflineRowOptions>(
      "offline", "lower bound: XLA heap-simulator placement with the whole future known (reads the trace twice)",
      std::move(offline), MakeOffline));
}

}  // namespace hbmsim
