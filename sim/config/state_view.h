// What a policy's row answers `hbmsim inspect` about a state it holds
// (PolicySpec::state_analysis): the analysis in its runtime's own terms and
// what one more request would do. sim/inspect lays the answer out around
// what every recording has (its header, the live blocks' recorded stacks,
// "Reserved, explained"); a policy whose row leaves the capability unset
// answers "no state analysis", and inspect says so.
#ifndef HBMSIM_SIM_CONFIG_STATE_VIEW_H_
#define HBMSIM_SIM_CONFIG_STATE_VIEW_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "allocator/core/allocator.h"
#include "nlohmann/json.hpp"
#include "sim/layer.h"

namespace hbmsim::sim {

// A live block, as inspect lists the largest ones with their stacks.
struct LiveBlockView {
  Offset addr;
  Bytes size;
  Bytes requested;
  uint64_t stream = 0;
  bool pending_free = false;
  Offset segment;  // the base of the region holding it
};

struct StateView {
  // The sections before the live blocks ("\nMemory by pool ...\n..."), each
  // starting with a blank line, in the runtime's terms.
  std::string text;
  // The same as fields of inspect's --json object, in the order they print.
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  std::vector<LiveBlockView> biggest;  // largest first
};

// One more request on a copy of the state (`inspect --probe SIZE`).
struct ProbeView {
  Bytes requested;
  std::string requested_text;  // the size as the runtime prints it ("10.00 MiB")
  Bytes rounded;
  StreamId stream;
  std::string pool;  // where the policy takes it from ("small", "large")
  AllocResult result;
  std::string how;                 // how it was served; empty on failure
  std::vector<std::string> steps;  // what the policy did first
  std::string oom_message;         // the runtime's text, on failure
};

struct StateAnalysisSupport {
  // Unset: the policy has no state analysis. Each takes an allocator the
  // row's factory built.
  std::function<StateView(const Allocator&)> analyze;
  std::function<ProbeView(const Allocator&, Bytes size, StreamId stream)> probe;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_STATE_VIEW_H_
