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
#include <tuple>
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

std::string AtLeastOneByte(const OptionValue& v) {
  return std::get<Bytes>(v).is_zero() ? "must be at least 1 byte" : "";
}

OptionSpec Alignment(std::string help) {
  return {"alignment", OptionType::kBytes, "256", std::move(help), {}, AtLeastOneByte};
}

AllocatorFactory FitFactory(FitStrategy strategy) {
  return [strategy](Bytes limit, const OptionValues& o) -> absl::StatusOr<std::unique_ptr<Allocator>> {
    return std::make_unique<FitAllocator>(FitOptions{limit, o.GetBytes("alignment").value(), strategy});
  };
}

absl::StatusOr<std::unique_ptr<Allocator>> MakePaged(Bytes limit, const OptionValues& o) {
  return std::make_unique<PagedAllocator>(PagedOptions{limit, o.GetBytes("page_size").value()});
}

absl::StatusOr<std::unique_ptr<Allocator>> MakeIdeal(Bytes limit, const OptionValues&) {
  return std::make_unique<IdealAllocator>(limit);
}

// Plans once from the whole trace's intervals; every allocator shares the plan.
absl::StatusOr<LimitedFactory> PlanOfflineFactory(const OptionValues& o, std::vector<BufferInterval> intervals) {
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(intervals, o.GetBytes("alignment").value()));
  return LimitedFactory([plan](Bytes limit) -> absl::StatusOr<std::unique_ptr<Allocator>> {
    return std::make_unique<OfflineAllocator>(plan, limit);
  });
}

}  // namespace

void RegisterBaselinePolicies(PolicyRegistry& registry);
void RegisterBaselinePolicies(PolicyRegistry& registry) {
  const std::vector<std::tuple<std::string, std::string, FitStrategy>> fits = {
      {"first_fit", "baseline: address-ordered first fit, eager coalescing, one region of the whole limit",
       FitStrategy::kFirstFit},
      {"best_fit", "baseline: exact best fit by (size, address), no bins, one region of the whole limit",
       FitStrategy::kBestFit},
  };
  for (const auto& [name, summary, strategy] : fits) {
    (void)registry.Register(
        {name, summary, {Alignment("requests are rounded up to a multiple of this")}, FitFactory(strategy)});
  }
  (void)registry.Register(
      {"paged",
       "baseline: physical memory fungible in pages (cuda_malloc_async / expandable-segments-like pool)",
       {{"page_size",
         OptionType::kBytes,
         "2MiB",
         "a request takes whole pages, wherever they are free",
         {},
         AtLeastOneByte}},
       MakePaged});
  (void)registry.Register(
      {"ideal", "lower bound: fits whenever live requested bytes <= limit (no placement)", {}, MakeIdeal});
  PolicySpec offline{"offline",
                     "lower bound: XLA heap-simulator placement with the whole future known (reads the trace "
                     "twice)",
                     {Alignment("planned blocks are rounded up to a multiple of this")},
                     {}};
  offline.plan = PlanOfflineFactory;
  (void)registry.Register(std::move(offline));
}

}  // namespace hbmsim
