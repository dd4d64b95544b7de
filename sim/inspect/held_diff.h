// `hbmsim compare --baseline A.prof --candidate B.prof`: what grew between
// two held states (JAX device memory profiles, held_report.h), per device
// (matched by the recording's label, "cuda:0"), by kind and by the user's
// frame, largest change first: the leak hunt JAX's documentation does with
// `pprof --diff_base`, in hbmsim's report. No allocator runs: a held state
// has no addresses, and what grew is a property of the two states.
#ifndef HBMSIM_SIM_INSPECT_HELD_DIFF_H_
#define HBMSIM_SIM_INSPECT_HELD_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/inspect/held_report.h"

namespace hbmsim::sim::inspect {

struct HeldDelta {
  std::string key;
  int64_t baseline_bytes = 0, candidate_bytes = 0;
  int64_t baseline_count = 0, candidate_count = 0;
  int64_t bytes() const { return candidate_bytes - baseline_bytes; }
};

struct HeldScopeDiff {
  std::string name;  // the device's label, or "on no device"
  int64_t baseline_bytes = 0, candidate_bytes = 0;
  std::vector<HeldDelta> kinds;   // largest |change| first, key on ties
  std::vector<HeldDelta> frames;  // the same
};

struct HeldDiff {
  std::string baseline, candidate;
  std::vector<HeldScopeDiff> scopes;  // devices by label (ascending), then "on no device"
};

HeldDiff DiffHeld(const HeldReport& baseline, const HeldReport& candidate);

// Rows listed per table in the text (the JSON has them all).
inline constexpr size_t kDiffRows = 15;

std::string RenderHeldDiffText(const HeldDiff& d);
nlohmann::ordered_json RenderHeldDiffJson(const HeldDiff& d);

}  // namespace hbmsim::sim::inspect

#endif  // HBMSIM_SIM_INSPECT_HELD_DIFF_H_
