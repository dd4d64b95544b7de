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
#include "sim/layer.h"

namespace hbmsim::sim {
namespace {

// The baselines' options, each name written once: the tables below declare
// them, offline's planner and recorded settings refer to them.
struct FitOption {
  static constexpr OptionName<Bytes> kAlignment{"alignment"};
};
struct PagedOption {
  static constexpr OptionName<Bytes> kPageSize{"page_size"};
};
struct OfflineOption {
  static constexpr OptionName<Bytes> kAlignment{"alignment"};
  static constexpr OptionName<std::string> kRules{"rules"};
};

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
  absl::StatusOr<Bytes> alignment = o.Get(OfflineOption::kAlignment);
  if (!alignment.ok()) return alignment.status();
  absl::StatusOr<std::string> rules = o.Get(OfflineOption::kRules);
  if (!rules.ok()) return rules.status();
  const PlannerRules r = *rules == "xla" ? PlannerRules::kXla : PlannerRules::kHbmsim;
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(intervals, alignment->value(), r));
  return LimitedFactory([plan](Bytes limit) -> absl::StatusOr<std::unique_ptr<Allocator>> {
    return std::make_unique<OfflineAllocator>(plan, limit);
  });
}

PolicySpec FitRow(std::string name, std::string summary, FitStrategy strategy) {
  OptionTable<FitOptions> t;
  t.Limit(&FitOptions::memory_limit);
  t.Add(FitOption::kAlignment, &FitOptions::alignment, "requests are rounded up to a multiple of this",
        AtLeastOneByte);
  return MakePolicySpec<FitOptions>(
      std::move(name), std::move(summary), std::move(t),
      [strategy](const FitOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        FitOptions with_strategy = o;
        with_strategy.strategy = strategy;
        return std::make_unique<FitAllocator>(with_strategy);
      });
}

PolicySpec PagedRow() {
  OptionTable<PagedOptions> paged;
  paged.Limit(&PagedOptions::memory_limit);
  paged.Add(PagedOption::kPageSize, &PagedOptions::page_size,
            "a request takes whole pages, wherever they are free", AtLeastOneByte);
  return MakePolicySpec<PagedOptions>(
      "paged",
      "baseline: physical memory fungible in pages (cuda_malloc_async / expandable-segments-like pool)",
      std::move(paged), [](const PagedOptions& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<PagedAllocator>(o);
      });
}

PolicySpec IdealRow() {
  OptionTable<LimitOnly> ideal;
  ideal.Limit(&LimitOnly::limit);
  PolicySpec spec = MakePolicySpec<LimitOnly>(
      "ideal", "lower bound: fits whenever live requested bytes <= limit (no placement)", std::move(ideal),
      [](const LimitOnly& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
        return std::make_unique<IdealAllocator>(o.limit);
      });
  spec.bounds_live_bytes = true;  // group_delta's lower bound
  return spec;
}

PolicySpec OfflineRow() {
  OptionTable<OfflineRowOptions> offline;
  offline.Limit(&OfflineRowOptions::limit);
  offline.Add(OfflineOption::kAlignment, &OfflineRowOptions::alignment,
              "planned blocks are rounded up to a multiple of this", AtLeastOneByte);
  offline.AddEnum(OfflineOption::kRules, &OfflineRowOptions::rules,
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
  spec.recording.made_formats = {TraceFormat::kXlaText, TraceFormat::kXlaProto};
  // An XLA dump (framework kXla) was packed by XLA's heap simulator: plan by its rules.
  spec.recording.recorded_options = [](const RecordedSettings& s, DeviceId) {
    std::vector<OptionEdit> out;
    if (s.framework == Framework::kXla) {
      out.push_back({OfflineOption::kRules, std::string(PlannerRulesName(PlannerRules::kXla))});
    }
    return out;
  };
  spec.plan = PlanOfflineFactory;
  return spec;
}

}  // namespace

absl::Status RegisterBaselinePolicies(PolicyRegistry& registry);
absl::Status RegisterBaselinePolicies(PolicyRegistry& registry) {
  PolicySpec rows[] = {
      FitRow("first_fit",
             "baseline: address-ordered first fit, eager coalescing, one region of the whole limit",
             FitStrategy::kFirstFit),
      FitRow("best_fit",
             "baseline: exact best fit by (size, address), no bins, one region of the whole limit",
             FitStrategy::kBestFit),
      PagedRow(),
      IdealRow(),
      OfflineRow(),
  };
  for (PolicySpec& row : rows) {
    if (absl::Status s = registry.Register(std::move(row)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::sim
