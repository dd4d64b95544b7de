// `compare --baseline A --candidate B` of two recordings of the same job
// (before/after a change, two batch sizes, one that fits and one that does
// not): what the allocator's replay of each reached, side by side, and why
// reserved differs.
//
//   peaks      peak allocated (the policy's bytes in use), peak reserved (its
//              pool, else the most ReservedBytes() reached), peak live bytes:
//              the numbers `hbmsim replay` of each recording reports at L
//   reserved   each recording's reserved at its peak of reserved, explained
//              (sim/report/reserved_explained.h), part by part: requested by
//              the user's frame (or tag), rounding and each cause of cached
//              memory, largest change first; each side's parts add up to its
//              reserved, so the changes add up to the difference
//   diverge    the first events at which the two streams differ (kind or
//              bytes of the same position), with the user's frame of each:
//              where the candidate started doing something else; the events
//              that only rebuild a start state (a snapshot's preexisting
//              blocks, a profile's inferred pool) are not the job's and are
//              left out
#ifndef HBMSIM_SIM_WHATIF_RECORDING_DIFF_H_
#define HBMSIM_SIM_WHATIF_RECORDING_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/report/reserved_explained.h"
#include "sim/scenario/scenario.h"

namespace hbmsim::sim {

// One recording replayed at L, as `hbmsim replay` replays it.
struct RecordingPeaks {
  int64_t peak_allocated = 0;
  int64_t peak_reserved = 0;
  uint64_t peak_live = 0;
  uint64_t failures = 0;
  std::optional<ReservedMoment> reserved_at_peak;  // unset when nothing was placed
};

absl::StatusOr<RecordingPeaks> ReplayPeaks(const Scenario& scenario, const AllocatorConfig& config, Bytes limit);

// One event of a stream, as the divergence list shows it.
struct StreamEvent {
  uint64_t index = 0;  // the event's position in its recording
  std::string kind;    // "alloc", "free", ...
  uint64_t bytes = 0;  // alloc and program_load; 0 otherwise
  std::string label;   // the user's top frame, else the tag; "" for none
};

// Position `position` (counting the device's events of each stream, start
// state left out) where the two differ; one side is unset when its stream ended.
struct Divergence {
  uint64_t position = 0;
  std::optional<StreamEvent> baseline, candidate;
};

struct DivergenceList {
  std::vector<Divergence> first;  // at most `keep`, in stream order
  uint64_t differing = 0;         // positions that differ in all
  uint64_t compared = 0;          // positions compared (the longer stream's length)
};

// Walks both recordings' event streams of their chosen devices in step.
absl::StatusOr<DivergenceList> FirstDivergences(const Scenario& baseline, const Scenario& candidate,
                                                size_t keep = 5);

// A (cause, key) of reserved at both peaks.
struct ReservedDelta {
  std::string cause, key;
  int64_t baseline = 0, candidate = 0;
  int64_t delta() const { return candidate - baseline; }
};
// Every (cause, key) of either side, largest |change| first (ties: cause, key).
std::vector<ReservedDelta> ReservedDeltas(const ReservedMoment& baseline, const ReservedMoment& candidate);

std::string RecordingDiffText(const RecordingPeaks& a, const RecordingPeaks& b, const DivergenceList& d,
                              size_t rows = 12);
nlohmann::ordered_json RecordingDiffJson(const RecordingPeaks& a, const RecordingPeaks& b, const DivergenceList& d);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_RECORDING_DIFF_H_
