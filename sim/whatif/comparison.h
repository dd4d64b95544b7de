// `hbmsim compare`: one row per allocator over the same scenario. Every
// number comes from trials (sim/whatif/trial.h), the replay `hbmsim replay`
// runs, so a row at L equals `hbmsim replay --allocator A --bytes-limit L`.
//
// Measures (tpu-and-xla.md §4; docs/what-if.md), at the limit L:
//   failures                  oom and fragmentation, replaying on after each
//   peak_bytes_in_use         the allocator's own (block sizes, rounding included)
//   peak_pool_bytes           what it held from the device at most
//   frag_at_first_failure     BFC's (free − largest free) / free with the two
//                             numbers of the first failed request
//   frag_at_peak              the same, right after the alloc that first reached
//                             peak bytes in use (free = limit − in use − reserved;
//                             largest free = the largest request that would fit)
//   utilization               peak_bytes_in_use / peak_pool_bytes
//   heap_minus_lower_bound    min bytes_limit − peak live bytes (XLA's "total
//                             fragmentation", with the minimum limit as the heap)
//   jw_at_peak_live           Johnstone–Wilson #2: (pool − live) / live at the
//                             event of peak live bytes (pool falls back to bytes in
//                             use + reserved when a policy reports none)
// A measure that does not apply (nothing failed, no pool) is absent (null, "-").
#ifndef HBMSIM_SIM_WHATIF_COMPARISON_H_
#define HBMSIM_SIM_WHATIF_COMPARISON_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario_config.h"
#include "sim/whatif/size_search.h"

namespace hbmsim::sim {

struct AtLimit {
  uint64_t failures = 0, oom = 0, fragmentation = 0;
  int64_t peak_bytes_in_use = 0;
  std::optional<int64_t> peak_pool_bytes;
  std::optional<double> frag_at_first_failure, frag_at_peak, utilization, jw_at_peak_live;
};

struct CompareRow {
  AllocatorConfig config;
  SizeResult size;
  std::optional<AtLimit> at_limit;  // only when a limit was given
};

// Sizes every configuration and, with a limit, replays it there in full.
// `configs` already carry the recording's settings and the user's edits.
// options.on_progress hears of each configuration as it starts (no limit
// tried yet) and of its search, with SizeProgress::config set.
absl::StatusOr<std::vector<CompareRow>> CompareAllocators(const Scenario& scenario, const ScenarioSurvey& survey,
                                                          const std::vector<AllocatorConfig>& configs,
                                                          std::optional<Bytes> limit,
                                                          const SizeOptions& options);
// The measures of one configuration at `limit`.
absl::StatusOr<AtLimit> MeasureAtLimit(const TrialTarget& target, Bytes limit);

// The row's name: the policy and each setting that runs differently from the
// policy's defaults ("NAME:KEY=VALUE"), so two variants of
// one policy never read alike.
std::string RowLabel(const AllocatorConfig& config);
// RowLabel of each row; a repeated one gets " #2", " #3".
std::vector<std::string> RowLabels(const std::vector<CompareRow>& rows);
// True when a limit was given and some row failed there: `compare` exits 1.
bool AnyRowFails(const std::vector<CompareRow>& rows);

// The limit L and where it came from (a flag, or what the recording states).
std::string CompareText(const Scenario& scenario, const ScenarioSurvey& survey,
                        const std::optional<LimitChoice>& limit, const std::vector<CompareRow>& rows);
nlohmann::ordered_json CompareJson(const Scenario& scenario, const ScenarioSurvey& survey,
                                   const std::optional<LimitChoice>& limit, const std::vector<CompareRow>& rows);

// Baseline versus candidate: the same allocator over two recordings.
std::string BaselineCandidateText(const std::string& baseline, const std::string& candidate,
                                  const ScenarioSurvey& a, const ScenarioSurvey& b,
                                  const std::optional<LimitChoice>& limit, const CompareRow& ra, const CompareRow& rb);
nlohmann::ordered_json BaselineCandidateJson(const ScenarioSurvey& a, const ScenarioSurvey& b,
                                             const std::optional<LimitChoice>& limit, const CompareRow& ra,
                                             const CompareRow& rb);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_COMPARISON_H_
