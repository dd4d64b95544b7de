// What the HTML report and the Perfetto trace draw, recorded during a replay
// in memory bounded by the drawing, never by the trace length:
//   - the Timeline (O(columns)) of live requested bytes, bytes in use, pool
//     bytes and the largest free block, sampled after EVERY event;
//   - failures, policy events and marks with their exact event index, the
//     first kMaxInstants of each (the rest are counted);
//   - the address map at the first failure and at the peak of bytes in use.
//
// The engine tells observers about allocs, failures, policy events and marks
// but not about frees, so the recorder also wraps the trace reader
// (Tap): each Next() first samples the allocator's state after the previous
// event, then reads the next one. The tap also tracks Σ requested bytes of
// live buffers and programs under the engine's rules (a failed alloc is live
// until its free; only the selected device counts), O(live) memory.
#ifndef HBMSIM_SIM_VIZ_VIZ_RECORDER_H_
#define HBMSIM_SIM_VIZ_VIZ_RECORDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "allocator/core/allocator.h"
#include "sim/engine/replay_engine.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "sim/viz/address_map.h"
#include "sim/viz/progress.h"
#include "sim/viz/tap_reader.h"
#include "sim/viz/timeline.h"
#include "trace/core/reader.h"

namespace hbmsim::sim::viz {

struct Instant {
  uint64_t event = 0;
  std::string name;    // "fragmentation", "defragmentation", a mark's label...
  std::string detail;  // one line for tooltips
};

class VizRecorder : public ReplayObserver {
 public:
  static constexpr size_t kMaxInstants = 10000;

  // `record` false: the tap only ticks `progress` (no sampling, no maps).
  VizRecorder(const Allocator& allocator, const ReplayOptions& options, Progress* progress = nullptr,
              bool record = true);
  ~VizRecorder() override;

  // The reader the engine must read through; valid while both live.
  EventReader& Tap(EventReader& inner);
  // Samples the state after the last event (call after ReplayEngine::Run).
  void Finish();

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  void OnMark(EventIndex index, std::string_view label) override;

  const Timeline& timeline() const { return timeline_; }
  const std::vector<Instant>& failures() const { return failures_; }
  const std::vector<Instant>& policy_events() const { return policy_events_; }
  const std::vector<Instant>& marks() const { return marks_; }
  uint64_t dropped_instants() const { return dropped_; }
  const AddressMap& first_failure_map() const { return first_failure_map_; }
  const AddressMap& peak_map() const { return peak_map_; }
  // Event index of the exact peak of bytes in use (first reached).
  uint64_t peak_event() const { return peak_event_; }

 private:
  friend class TapReader<VizRecorder>;
  void BeforeRead();
  void Track(const Event& e);
  void Sample(uint64_t index);
  void MaybeMapPeak(uint64_t index, int64_t in_use);
  void Keep(std::vector<Instant>& list, Instant i);

  const Allocator& allocator_;
  std::optional<DeviceId> device_;
  Progress* progress_;
  bool record_;
  std::unique_ptr<TapReader<VizRecorder>> tap_;
  uint64_t read_ = 0;  // events read so far: the next event's index
  absl::flat_hash_map<uint64_t, uint64_t> live_buffers_;
  absl::flat_hash_map<uint64_t, uint64_t> live_programs_;
  uint64_t live_requested_ = 0;
  Timeline timeline_;
  std::vector<Instant> failures_, policy_events_, marks_;
  // The tag of the last failed alloc (OnFailure follows its OnAlloc), for the
  // failure's tooltip and Perfetto args.
  uint64_t failed_alloc_event_ = UINT64_MAX;
  std::string failed_alloc_tag_;
  uint64_t dropped_ = 0;
  AddressMap first_failure_map_, peak_map_;
  int64_t peak_in_use_ = -1;
  uint64_t peak_event_ = 0;
  static constexpr uint64_t kMapWorkPerEvent = 16, kMapWorkAllowance = 1000000;
  uint64_t map_work_ = 0;  // blocks walked for peak maps so far
  bool peak_map_stale_ = false;
  bool in_start_state_ = true;            // reading the recording's start state (kStartStateTag)
  uint64_t peak_from_ = 0;                // events before it build the start state (ReplayOptions)
  bool mark_restates_allocator_ = false;  // the last event: EventContext::allocator_action
};

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_VIZ_RECORDER_H_
