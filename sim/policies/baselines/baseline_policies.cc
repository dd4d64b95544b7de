// Registry entries of the baselines and lower bounds (allocator/baselines/):
// first_fit, best_fit, paged, ideal and offline. They exist to be compared
// with the real policies (`hbmsim compare`, `hbmsim size`).
//
// `offline` needs the whole future of the trace: it registers a planning
// factory (PolicySpec::plan) that the scenario feeds with the live intervals
// of the very events it replays (a first pass over the recording, memory
// proportional to its buffers); the replays are the second.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "allocator/baselines/fit_allocator.h"
#include "allocator/baselines/ideal_allocator.h"
#include "allocator/baselines/offline_allocator.h"
#include "allocator/baselines/paged_allocator.h"
#include "fmt/format.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

// The limit alone: `ideal` has no option.
struct LimitOnly {
  Bytes limit;
};

// `offline`'s options: the planner's alignment and rules.
struct OfflineRowOptions {
  Bytes limit;
  Bytes alignment{256};
  PlannerRules rules = PlannerRules::kHbmsim;
};

std::string_view PlannerRulesName(PlannerRules r) { return r == PlannerRules::kXla ? "xla" : "hbmsim"; }

// Plans once from the whole trace's intervals; every allocator shares the plan.
absl::StatusOr<LimitedFactory> PlanOfflineFactory(const OptionValues& o, std::vector<BufferInterval> intervals) {
  absl::StatusOr<Bytes> alignment = o.Get<Bytes>("alignment");
  if (!alignment.ok()) return alignment.status();
  absl::StatusOr<std::string> rules = o.Get<std::string>("rules");
  if (!rules.ok()) return rules.status();
  const PlannerRules r = *rules == "xla" ? PlannerRules::kXla : PlannerRules::kHbmsim;
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(intervals, alignment->value(), r));
  return LimitedFactory([plan](Bytes limit) -> absl::StatusOr<std::unique_ptr<Allocator>> {
    return std::make_unique<OfflineAllocator>(plan, limit);
  });
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
  PolicySpec ideal_spec = MakePolicySpec<LimitOnly>(
      "ideal", "lower bound: fits whenever live requested bytes <= limit (no placement)", std::move(ideal),
      [](const LimitOnly& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<IdealAllocator>(o.limit);
      });
  ideal_spec.bounds_live_bytes = true;
  (void)registry.Register(std::move(ideal_spec));

  OptionTable<OfflineRowOptions> offline;
  offline.Limit(&OfflineRowOptions::limit);
  offline.Add("alignment", &OfflineRowOptions::alignment, "planned blocks are rounded up to a multiple of this",
              AtLeastOneByte);
  offline.AddEnum("rules", &OfflineRowOptions::rules,
                  "hbmsim: sizes rounded to the alignment, ties by earlier start; xla: XLA's heap simulator "
                  "(unrounded sizes, aligned chunk starts, ties by value id; docs/formats/xla.md)",
                  {PlannerRules::kHbmsim, PlannerRules::kXla}, PlannerRulesName);
  PolicySpec spec = MakePolicySpec<OfflineRowOptions>(
      "offline", "lower bound: XLA heap-simulator placement with the whole future known (reads the trace twice)",
      std::move(offline), [](const OfflineRowOptions&) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return absl::FailedPreconditionError("offline is built from a plan of the whole trace (PolicySpec::plan)");
      });
  spec.factory = nullptr;  // the scenario builds it through `plan`
  // XLA's compiler writes these dumps, and its buffer assignment is this planner
  // under XLA's rules: replayed with no --allocator, a dump shows what XLA did.
  spec.recording.made_formats = {"xla-text", "xla-proto"};
  // An XLA dump (framework "xla") was packed by XLA's heap simulator: plan by its rules.
  spec.recording.recorded_options = [](const RecordedSettings& s, DeviceId) {
    std::vector<std::pair<std::string, std::string>> out;
    if (s.framework == "xla") out.emplace_back("rules", "xla");
    return out;
  };
  spec.plan = PlanOfflineFactory;
  (void)registry.Register(std::move(spec));
}

}  // namespace hbmsim
