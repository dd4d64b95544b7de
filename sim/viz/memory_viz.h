// `hbmsim replay --memory-viz out.pickle|out.json`: the simulated run as a
// PyTorch memory snapshot (pytorch-caching-allocator.md
// §3–4), so pytorch.org/memory_viz and torch.cuda._memory_viz show any
// policy's run. docs/memory-viz-rules.md lists what the viewers require; the
// export keeps all of it at every step of the viewer's backward walk:
//
//   final `segments`   one per region, or per mapped run of an expandable
//                      region (is_expandable, unmapped space is no segment);
//                      blocks tile it (in use → active_allocated, pending →
//                      active_pending_free, program → active_allocated with
//                      requested = size, free → inactive), each with the
//                      frames of the alloc that placed it;
//   `device_traces[d]` d = the replayed device (earlier lists empty): alloc
//                      (addr, requested size), free_requested/free_completed
//                      (a plain `free` writes both), segment_alloc/segment_free
//                      (region added/released), segment_map/segment_unmap
//                      (pages mapped/unmapped; on the stream the policy
//                      names for the region, else the request's), oom (device_free as
//                      PyTorch records it, what CUDA reports free: the
//                      limit less the policy's pool bytes; size = rounded); each with the
//                      event's time_us, stream, frames, category (the
//                      recording's, else the `tag=`; `unknown` when none),
//                      user_metadata and compile_context when recorded;
//   `allocator_settings` the settings the run used in the runtime's own keys
//                      (PYTORCH_CUDA_ALLOC_CONF, expandable_segments, ...;
//                      RecordingHooks::settings_of), the policy, its options,
//                      which addresses are shown;
//   `external_annotations` the recording's, when it has them.
//
// The start state is state, not history: events that describe memory held
// when the recording began (tag=preexisting, kStartStateTag, and every event
// before ReplayOptions::peak_from: a profile's start state) write no trace
// entry, and neither does what the policy does while placing them, so the
// viewer shows those blocks and segments from the first event on.
//
// Resident programs and buffers a policy moves (TPU defragmentation) are no
// allocs of the trace: after any program event, eviction, reload or
// defragmentation the recorder compares the memory map with what it holds
// and writes the difference (frees first, then allocs, in address order);
// programs are allocs of category `program`, with requested = size.
//
// Like PyTorch's ring buffer (trace_alloc_max_entries) only the LAST
// `max_entries` entries are kept; dropping the oldest ones only shortens the
// backward walk, which stays consistent.
#ifndef HBMSIM_SIM_VIZ_MEMORY_VIZ_H_
#define HBMSIM_SIM_VIZ_MEMORY_VIZ_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "sim/engine/replay_engine.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "sim/viz/tap_reader.h"
#include "trace/core/reader.h"

namespace hbmsim::sim::viz {

// Which addresses the export shows (--memory-viz-addresses).
enum class VizAddresses : uint8_t {
  kAuto,       // the recorded ones when every recorded alloc was placed at its address
  kRecorded,   // the recorded ones, an error when the replay did not reproduce them
  kSimulated,  // the policy's own
};

class MemoryVizRecorder : public ReplayObserver {
 public:
  static constexpr size_t kDefaultMaxEntries = 100000;

  MemoryVizRecorder(const Allocator& allocator, const ReplayOptions& options,
                    size_t max_entries = kDefaultMaxEntries);
  ~MemoryVizRecorder() override;

  // The engine must read through this reader: it sees frees and each
  // event's recorded context, which the observer interface does not pass.
  EventReader& Tap(EventReader& inner);

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  // Call after the replay, before Snapshot().
  void Finish();
  // An export the viewer could not draw is refused: an error when the
  // policy's placements are no addresses (two live buffers overlap, as the
  // `ideal` bound reports them) or an alloc lies in no segment the export
  // has (a policy whose address space is not segments, such as `paged`).
  absl::Status CheckPlacements() const;

  // The snapshot as JSON values (segment_pool_id as a 2-element list).
  // `settings` are extended with trace_alloc_* and hbmsim_addresses.
  nlohmann::ordered_json Snapshot(const nlohmann::ordered_json& settings) const;
  size_t entries() const { return trace_.size(); }
  uint64_t dropped() const { return dropped_; }
  // Allocs that carried a recorded address (`addr=`), and those placed at it.
  uint64_t recorded_allocs() const { return recorded_allocs_; }
  uint64_t matched_allocs() const { return matched_allocs_; }
  bool addresses_reproduced() const { return recorded_allocs_ > 0 && matched_allocs_ == recorded_allocs_; }

 private:
  friend class TapReader<MemoryVizRecorder>;
  enum class Action : uint8_t {
    kAlloc,
    kFreeRequested,
    kFreeCompleted,
    kSegmentAlloc,
    kSegmentFree,
    kSegmentMap,
    kSegmentUnmap,
    kOom,
    kSnapshot
  };
  // What an entry says besides its numbers: ids into the reader's context
  // table (frames) and into labels_ (strings).
  struct Context {
    uint32_t frames = 0;
    uint32_t category = 0;
    uint32_t user_metadata = 0;
    uint32_t compile_context = 0;
  };
  struct Entry {
    Action action;
    uint64_t addr;  // device_free for oom
    uint64_t size;
    uint64_t stream;
    std::optional<uint64_t> time_us;
    Context context;
  };
  struct Placed {
    uint64_t addr, requested, stream;
    Context context;
    bool pending = false;  // its free was requested, not yet completed
  };
  struct Extent {
    uint64_t end, id;
  };
  void Track(const Event& e);
  void TrackFree(const Event& e);
  void CompletePendingUnder(uint64_t begin, uint64_t end);
  void Sync();
  // Sync's steps: what moved since the last one, then the frees and allocs that say it.
  struct Change {
    uint64_t old_addr, new_addr, size;
    bool program, gone;
    uint64_t id;
  };
  std::vector<Change> ChangesSinceSync() const;
  void ApplyChanges(std::vector<Change>& changes);
  void Move(Action action, uint64_t addr, uint64_t size, const Context& c);
  void Push(Action action, uint64_t addr, uint64_t size, uint64_t stream, const Context& c);
  nlohmann::ordered_json Segments() const;
  nlohmann::ordered_json Trace(bool categories) const;
  nlohmann::ordered_json Frames(uint32_t list) const;
  uint64_t DeviceFree() const;
  void AddContext(nlohmann::ordered_json& out, const Context& c, bool categories) const;

  const Allocator& allocator_;
  std::optional<DeviceId> device_;
  size_t max_entries_;
  std::unique_ptr<TapReader<MemoryVizRecorder>> tap_;
  const ContextTable* recorded_ = nullptr;  // the reader's frames, if it has any
  ContextTable labels_;                     // categories and metadata strings
  // The event being replayed: its time, stream and context.
  std::optional<uint64_t> now_us_;
  uint64_t now_stream_ = 0;
  Context now_;
  bool in_start_state_ = true;                      // still reading the recording's start state
  uint64_t peak_from_ = 0;                          // events before it build the start state (ReplayOptions)
  uint64_t read_ = 0;                               // events read so far, every device's
  absl::flat_hash_map<uint64_t, Placed> live_;      // buffer id → its alloc
  absl::flat_hash_map<uint64_t, Placed> programs_;  // program id → its reservation
  // Programs came or went, or buffers moved: Sync() before the next event.
  bool sync_pending_ = false;
  std::deque<Entry> trace_;
  uint64_t dropped_ = 0;
  bool any_category_ = false;
  uint64_t recorded_allocs_ = 0, matched_allocs_ = 0;
  std::map<uint64_t, Extent> extents_;   // live block start → end and id, to see overlaps
  std::string overlap_;                   // the first overlap seen, for the error
};

// Pickle protocol 4 of a snapshot built by MemoryVizRecorder::Snapshot:
// segment_pool_id becomes a tuple, the rest maps one to one.
std::string SnapshotPickle(const nlohmann::ordered_json& snapshot);

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_MEMORY_VIZ_H_
