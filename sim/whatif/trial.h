// One trial replay of a CompactTrace through one allocator, with the replay
// engine's rules (sim/engine/replay_engine.h): a failed alloc's later frees
// are ignored; a policy without a program model sees program_load/unload as
// an alloc/free of its own id space. Live handles sit in vectors indexed by
// the trace's dense slots, so a trial allocates nothing per event.
#ifndef HBMSIM_SIM_WHATIF_TRIAL_H_
#define HBMSIM_SIM_WHATIF_TRIAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "sim/config/allocator_config.h"
#include "sim/whatif/compact_trace.h"

namespace hbmsim {

struct TrialOptions {
  bool stop_at_first_failure = true;       // `--on-oom stop`: enough to know pass/fail
  std::optional<uint64_t> probe_position;  // take GetStats() right after this event
  std::optional<uint64_t> end_position;    // stop right after this event
};

struct TrialFailure {
  uint64_t event = 0;  // index in the file
  Bytes rounded;
  AllocStatus kind = AllocStatus::kOom;
  Bytes free_bytes;
  Bytes largest_free_block;
};

struct TrialResult {
  uint64_t failures = 0;
  uint64_t oom = 0;
  uint64_t fragmentation = 0;
  std::optional<TrialFailure> first_failure;
  AllocatorStats final_stats;
  std::optional<AllocatorStats> probe_stats;
  uint64_t peak_in_use_position = 0;  // the event that first reached the peak bytes in use

  bool ok() const { return failures == 0; }
};

// Builds a fresh allocator for one limit; trials never share one.
using AllocatorMaker = std::function<absl::StatusOr<std::unique_ptr<Allocator>>(Bytes limit)>;

// The maker for `config`: BuildAllocator, except `offline`, whose plan is
// made once from the trace's intervals and shared by every trial.
AllocatorMaker MakeAllocatorMaker(const AllocatorConfig& config, const CompactTrace& trace);

// Runs one trial. Errors: the maker's (bad options) or a broken invariant
// under paranoid checking (InternalError).
absl::StatusOr<TrialResult> RunTrial(const CompactTrace& trace, const AllocatorMaker& maker, Bytes limit,
                                     const TrialOptions& options);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_TRIAL_H_
