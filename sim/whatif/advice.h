// `hbmsim advise`: which change would make a job fit. For the policy the job
// ran, every AdviceRow of its registry row (sim/config/policy_registry.h) is
// tried on the same scenario through the same trials `size` and `compare` run
// (sim/whatif/comparison.h): the minimum limit with that change, whether it
// fits at the limit L, and what it saves against today's setting. A row whose
// settings are what already ran is left out: it is today's line.
#ifndef HBMSIM_SIM_WHATIF_ADVICE_H_
#define HBMSIM_SIM_WHATIF_ADVICE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/whatif/comparison.h"

namespace hbmsim::sim {

struct AdviceLine {
  std::string how;  // the exact setting to use; "today" for the job's own
  CompareRow row;
};

struct Advice {
  AdviceLine today;
  std::vector<AdviceLine> candidates;  // ranked: fitting at L first, then by min limit
};

// `today` is the job's configuration (the recording's settings and the
// user's edits applied); `allocator_arg` and `sets` are how it was named, so a
// candidate is `today` plus the row's KEY=VALUE edits.
absl::StatusOr<Advice> Advise(const Scenario& scenario, const ScenarioSurvey& survey,
                              const AllocatorConfig& today, const std::string& allocator_arg,
                              const std::vector<std::string>& sets, std::optional<Bytes> limit,
                              const SizeOptions& options);

// `device_memory`: the device's total memory, when known, so each minimum
// limit is also said as the policy's fraction setting (PolicySpec::limit_setting).
// `limit_source`: where L came from ("--bytes-limit", "the recording's ..."), shown after it.
std::string AdviceText(const Scenario& scenario, const ScenarioSurvey& survey, std::optional<Bytes> limit,
                       const Advice& advice, std::optional<Bytes> device_memory = std::nullopt,
                       const std::string& limit_source = "");
nlohmann::ordered_json AdviceJson(const Scenario& scenario, std::optional<Bytes> limit, const Advice& advice,
                                  std::optional<Bytes> device_memory = std::nullopt);

// The advice as a section of `hbmsim replay`'s report (after a failure): the
// ranked table and today's minimum, without advise's header lines that the
// replay report already states.
// `peak_live`: the recording's peak live bytes; above L, no setting can fit and
// the section says by how much the job itself must hold less.
std::string AdviceSectionText(std::optional<Bytes> limit, const Advice& advice, Bytes peak_live,
                              std::optional<Bytes> start_state_decides = std::nullopt);
// The bytes the recording's start state reserves (a profile's pool, grown
// before its first record; a snapshot's segments) when they decide every
// line's minimum: one and the same minimum for all, at or above them, and
// they exceed the job's peak live bytes. nullopt otherwise.
std::optional<Bytes> StartStateDecides(const Scenario& scenario, const Advice& advice, Bytes peak_live);

// For a recording that began warm (sim/whatif/fresh_start.h): `fresh`, the
// same advice from a fresh start, as the section after AdviceText or
// AdviceSectionText, saying which table applies to what.
std::string FreshStartAdviceText(std::optional<Bytes> limit, const Advice& fresh);

// The smallest fraction of `device_memory`, in hundredths, whose limit holds
// `min_limit` ("0.62"); nullopt when it would exceed the whole device.
std::optional<std::string> LimitFraction(Bytes min_limit, Bytes device_memory);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_ADVICE_H_
