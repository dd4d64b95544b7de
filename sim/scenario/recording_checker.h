// Follows the replay of a recording that records its allocator's device
// calls and OOMs (a PyTorch snapshot) event by event (a ReplayObserver),
// applies what the recording did besides allocs and frees, and compares the
// simulation with what the recording saw (docs/torch-model.md, "engine
// contract"):
//
//  * a recorded `segment_free` the policy has not matched yet is the user's
//    torch.cuda.empty_cache(): the policy's empty_cache hook runs at once;
//  * every trace alloc's simulated address against its recorded one;
//  * the k-th simulated cudaMalloc (kRegionAdded) against the k-th recorded
//    segment_alloc (address and size), the same for segment_map,
//    segment_free and segment_unmap;
//  * gen1: each live block's recorded history address (HistoryAddresses)
//    against the simulated live block there at the end (CompareHistory);
//  * each recorded `oom` entry (an `alloc tag=oom`): the simulated outcome and,
//    when it failed, PyTorch's OutOfMemoryError text for the simulated state;
//  * a recording that reports its allocator's figures after each event (a
//    TF/JAX profile, EventReader::current_figures): address, chunk size,
//    bytes in use, fragmentation and peak after each one (recorded_figures.h),
//    when EnableFigures was called.
#ifndef HBMSIM_SIM_SCENARIO_RECORDING_CHECKER_H_
#define HBMSIM_SIM_SCENARIO_RECORDING_CHECKER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/policy_registry.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "sim/scenario/recorded_figures.h"
#include "trace/core/reader.h"
#include "trace/core/recorded.h"

namespace hbmsim::sim {

// One recorded segment event, or one the policy did: (address, size) at an event.
struct SegmentRecord {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t event = 0;
  std::optional<size_t> entry;  // device trace index (recorded side only)
};

// Recorded vs simulated, one kind of segment event.
struct SegmentComparison {
  std::vector<SegmentRecord> recorded;
  std::vector<SegmentRecord> simulated;
  uint64_t matched() const;
  // The first k where they differ (or one side has no k-th event).
  std::optional<size_t> first_mismatch() const;
};

struct AllocMismatch {
  uint64_t event = 0;
  std::optional<size_t> entry;
  uint64_t recorded = 0;
  std::string simulated;  // "0x7f...", or the failure verdict
};

struct RecordedOom {
  uint64_t event = 0;
  std::optional<size_t> entry;
  Bytes size;         // the entry's (rounded) request
  Bytes device_free;  // what cudaMemGetInfo said then
  AllocResult result;
  std::string message;  // PyTorch's text for the simulated state; empty if it fit
};

// A gen1 history address with no live block of that request at the end.
struct HistoryMismatch {
  uint64_t addr = 0;
  uint64_t requested = 0;
  std::string simulated;  // what the final state holds there
};

class RecordingChecker : public ReplayObserver {
 public:
  // `policy` is the allocator the policy's factory built and `hooks` its
  // RecordingHooks; without an empty_cache hook nothing is released on
  // segment_free, without oom_message a recorded OOM has no runtime text.
  RecordingChecker(const EventReader& reader, Allocator& policy, const RecordingHooks& hooks)
      : reader_(reader), policy_(policy), hooks_(hooks) {}

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnRelease(EventIndex index, const Event& e) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  void OnMark(EventIndex index, std::string_view label) override;

  // After the replay: the recorded gen1 history addresses against `final_state`.
  void CompareHistory(const Allocator& final_state, const HistoryAddresses& recorded);
  uint64_t history_total() const { return history_total_; }
  uint64_t history_matched() const { return history_matched_; }
  uint64_t history_past() const { return history_past_; }
  const std::optional<HistoryMismatch>& first_history_mismatch() const { return first_history_mismatch_; }

  // allocs (trace allocs and gen1 history addresses) and
  // segments (segment_alloc + segment_map), as docs/cli.md's recorded_check.
  RecordedCheck Check() const;
  const SegmentComparison& segment_allocs() const { return segment_allocs_; }
  const SegmentComparison& segment_frees() const { return segment_frees_; }
  const SegmentComparison& maps() const { return maps_; }
  const SegmentComparison& unmaps() const { return unmaps_; }
  const std::optional<AllocMismatch>& first_alloc_mismatch() const { return first_alloc_mismatch_; }
  const std::vector<RecordedOom>& ooms() const { return ooms_; }
  uint64_t empty_cache_calls() const { return empty_cache_calls_; }

  // Compare the recorded figures too; `peak_before` is the recorded peak
  // when the recording began.
  void EnableFigures(int64_t peak_before) { figures_.emplace(peak_before); }
  // Set when EnableFigures was called.
  const std::optional<FiguresCheck>& figures() const { return figures_; }

 private:
  void OnRecordedOom(EventIndex index, const Event& e, const AllocResult& r);

  const EventReader& reader_;
  Allocator& policy_;
  const RecordingHooks& hooks_;
  uint64_t allocs_total_ = 0;
  uint64_t allocs_matched_ = 0;
  std::optional<AllocMismatch> first_alloc_mismatch_;
  SegmentComparison segment_allocs_, segment_frees_, maps_, unmaps_;
  std::vector<RecordedOom> ooms_;
  uint64_t empty_cache_calls_ = 0;
  uint64_t history_total_ = 0;
  uint64_t history_matched_ = 0;
  uint64_t history_past_ = 0;
  std::optional<HistoryMismatch> first_history_mismatch_;
  std::optional<FiguresCheck> figures_;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_SCENARIO_RECORDING_CHECKER_H_
