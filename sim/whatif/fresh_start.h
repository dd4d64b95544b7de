// Two answers for a recording that began warm. Most real snapshots start
// after a warm-up: the allocator had already reserved segments (and cached
// free blocks in them) before the first recorded event. Replaying that start
// state as recorded (StartStateMode::kSeed) answers for that process, with
// its cache as it was; a user asking "what does my job need" means a new run,
// from a fresh start: the same live blocks placed through the policy, the
// cache rebuilt by the replay (StartStateMode::kPlace, `--start-state place`).
// `replay`, `size` and `advise` give both when they differ in kind, and say
// which applies to what.
#ifndef HBMSIM_SIM_WHATIF_FRESH_START_H_
#define HBMSIM_SIM_WHATIF_FRESH_START_H_

#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/scenario/scenario.h"
#include "sim/whatif/size_search.h"

namespace hbmsim::sim {

// True when `scenario` begins with memory reserved that a run of `config`
// installs as recorded: a start state with segments, replayed in seed mode
// by a policy that seeds. Otherwise there is one answer only (a recording
// from empty, --start-state place, or a policy that places the start state).
bool BeganWarm(const Scenario& scenario, const AllocatorConfig& config);

// The same scenario replayed from a fresh start (--start-state place).
Scenario FreshStartOf(const Scenario& scenario);

// Both minimum limits of one configuration.
struct StartAnswers {
  Bytes reserved_at_start;  // what the recording began with
  SizeResult as_recorded;   // seed: that process, its cache as recorded
  SizeResult fresh_start;   // place: a new run of the job
};

// Sizes both; nullopt when the scenario did not begin warm (one answer).
absl::StatusOr<std::optional<StartAnswers>> SizeBothStarts(const Scenario& scenario,
                                                           const AllocatorConfig& config,
                                                           const SizeOptions& options);

// The sentence that says both answers and which applies to what, ending in a
// newline: "The recording began with 13.15GiB already reserved ... As recorded
// ... needs X; from a fresh start ... Y." `policy` names the allocator.
std::string StartAnswersText(const StartAnswers& a, const std::string& policy);

// {"reserved_at_start", "as_recorded": {min_bytes_limit}, "fresh_start": {...}}
// (a min_bytes_limit of null: no limit up to 4EiB fits).
nlohmann::ordered_json StartAnswersJson(const StartAnswers& a);

// "this process ... / a new run ..." said once, for the `size` and `advise` texts.
inline constexpr std::string_view kAsRecordedMeans =
    "that process resumed with its cache as the recording found it";
inline constexpr std::string_view kFreshStartMeans =
    "a new run of the job: its live blocks placed through the policy, the cache rebuilt (--start-state "
    "place)";

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_FRESH_START_H_
