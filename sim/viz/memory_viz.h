// `hbmsim replay --memory-viz out.pickle|out.json`: the simulated run as a
// PyTorch memory snapshot (shared/reference/pytorch-caching-allocator.md
// §3–4), so pytorch.org/memory_viz draws any policy's run — BFC regions and
// TPU memory appear as segments.
//
//   final `segments`   every region of the walk, its blocks tiling it
//                      (in use → active_allocated, pending → active_pending_free,
//                      program → active_allocated with requested = size,
//                      free / unmapped → inactive);
//   `device_traces[0]` alloc (addr, requested size), free_requested and
//                      free_completed (a plain `free` writes both), segment_alloc /
//                      segment_free (region added / released), segment_map /
//                      segment_unmap (region grown / shrunk in place), oom
//                      (device_free = the failure's free bytes, size = rounded);
//   `allocator_settings` the policy name and its effective options.
//
// The trace grows with the events, so, like PyTorch's own ring buffer
// (trace_alloc_max_entries), only the LAST `max_entries` entries are kept and
// trace_alloc_overflowed says whether older ones were dropped. Dropping the
// oldest entries keeps the backward walk from the final segments consistent:
// every address it meets lies in a final segment or in a segment a kept
// entry frees or maps. Program loads are not allocs: a resident program is
// an active block of the final segments with no trace entry.
#ifndef HBMSIM_SIM_VIZ_MEMORY_VIZ_H_
#define HBMSIM_SIM_VIZ_MEMORY_VIZ_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "sim/engine/replay_engine.h"
#include "sim/engine/replay_observer.h"
#include "trace/core/reader.h"

namespace hbmsim::viz {

class MemoryVizRecorder : public ReplayObserver {
 public:
  static constexpr size_t kDefaultMaxEntries = 100000;

  MemoryVizRecorder(const Allocator& allocator, const ReplayOptions& options,
                    size_t max_entries = kDefaultMaxEntries);
  ~MemoryVizRecorder() override;

  // The engine must read through this reader: it sees frees, which the
  // observer interface does not report.
  EventReader& Tap(EventReader& inner);

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;

  // The snapshot as JSON values (segment_pool_id as a 2-element list).
  nlohmann::ordered_json Snapshot(const nlohmann::ordered_json& settings) const;
  size_t entries() const { return trace_.size(); }
  uint64_t dropped() const { return dropped_; }

 private:
  class TapReader;
  enum class Action : uint8_t {
    kAlloc,
    kFreeRequested,
    kFreeCompleted,
    kSegmentAlloc,
    kSegmentFree,
    kSegmentMap,
    kSegmentUnmap,
    kOom
  };
  struct Entry {
    Action action;
    uint64_t addr;  // device_free for oom
    uint64_t size;
    uint64_t stream;
  };
  struct Placed {
    uint64_t addr, requested, stream;
  };
  void Track(const Event& e);
  void Push(Entry e);

  const Allocator& allocator_;
  std::optional<DeviceId> device_;
  size_t max_entries_;
  std::unique_ptr<TapReader> tap_;
  absl::flat_hash_map<uint64_t, Placed> live_;
  std::deque<Entry> trace_;
  uint64_t dropped_ = 0;
};

// Pickle protocol 4 of a snapshot built by MemoryVizRecorder::Snapshot:
// segment_pool_id becomes a tuple, the rest maps one to one.
std::string SnapshotPickle(const nlohmann::ordered_json& snapshot);

}  // namespace hbmsim::viz

#endif  // HBMSIM_SIM_VIZ_MEMORY_VIZ_H_
