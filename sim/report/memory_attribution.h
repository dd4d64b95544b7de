// Where the memory went: the buffers a policy held at the peak and at the
// first failure, grouped by tag, by op and by top user frame, largest first,
// with their shares, plus the N largest buffers. A ReplayObserver, so any
// replay (text trace, snapshot, XLA dump) gets it by registering one.
//
// "Held" means placed and not yet released (a free, or a free_completed; a
// buffer whose free was only requested is still held). Bytes are the caller's
// requested bytes (what the user's code asked for), not the policy's rounded
// blocks. The peak is the first event at which the held bytes reached their
// maximum.
//
// Memory stays proportional to the live set, never to the trace: the state at
// the peak is rebuilt from the current one by taking out the buffers placed
// after the peak and putting back those released after it,
//
//   held(peak) = (held(now) \ born_after_peak) ∪ died_after_peak.
//
// Labels come from the event: the tag as written (`tag=`; "(untagged)" when
// absent), the op (the tag without a trailing ".N"/"_N" instance number, so
// XLA's fusion.12 and fusion.7 add up to "fusion"), and the top user frame when
// the caller supplies a FrameFn (a PyTorch snapshot's first frame outside
// torch; XLA traces have none).
#ifndef HBMSIM_SIM_REPORT_MEMORY_ATTRIBUTION_H_
#define HBMSIM_SIM_REPORT_MEMORY_ATTRIBUTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "trace/core/live_id_table.h"

namespace hbmsim::sim {

// The op of a tag: "fusion.12" -> "fusion", "copy_3" -> "copy", "weights" -> "weights".
std::string OpOfTag(std::string_view tag);

struct HeldBuffer {
  uint64_t id = 0;
  uint64_t bytes = 0;  // requested
  EventIndex event;    // its alloc
  std::string tag;
  std::string frame;  // empty when unknown
};

struct MemoryGroup {
  std::string key;
  uint64_t bytes = 0;
  uint64_t buffers = 0;
  double share = 0;  // bytes / total held bytes, in [0, 1]
};

// One moment: every grouping, largest first (ties by key), and the largest buffers.
struct MemoryBreakdown {
  EventIndex event;  // the peak's alloc, or the failing request's event
  uint64_t held_bytes = 0;
  uint64_t held_buffers = 0;
  std::vector<MemoryGroup> by_tag;
  std::vector<MemoryGroup> by_op;
  std::vector<MemoryGroup> by_frame;  // empty when no buffer has a frame
  std::vector<HeldBuffer> largest;    // at most top_buffers, largest first (ties by id)
};

// True when every held buffer is untagged (most PyTorch snapshots): a tag
// table would be one 100 % "(untagged)" row.
bool NothingTagged(const std::vector<MemoryGroup>& by_tag);

// The failing request of the first failure, as the user's code made it.
struct FailedRequest {
  EventIndex event;
  uint64_t id = 0;
  uint64_t requested = 0;
  AllocStatus kind = AllocStatus::kOom;
  std::string tag;
  std::string frame;
};

class MemoryAttribution : public ReplayObserver {
 public:
  using FrameFn = std::function<std::string(const Event&)>;
  explicit MemoryAttribution(size_t top_buffers = 10, FrameFn frame = nullptr);

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnRelease(EventIndex index, const Event& e) override;
  void OnFailure(const FailureRecord& f) override;
  // The peak counts from the state a recording's start state leaves.
  void OnStartStateBuilt(EventIndex last) override;

  // Nullopt before anything was held.
  std::optional<MemoryBreakdown> AtPeak() const;
  // Nullopt when nothing failed: the state just before the first failed request.
  const std::optional<MemoryBreakdown>& AtFirstFailure() const { return at_failure_; }
  const std::optional<FailedRequest>& first_failure() const { return failed_; }
  // Tags and frames kept now, "(untagged)" and "" included: those of the
  // held buffers and of the ones kept for the peak (for tests).
  size_t labels_kept() const { return labels_.size() - free_labels_.size(); }

 private:
  MemoryBreakdown Breakdown(EventIndex event, const std::vector<const HeldBuffer*>& held) const;

  size_t top_buffers_;
  FrameFn frame_;
  // A held buffer and the peak it was placed after: born after the latest
  // peak iff its peaks_ is this one's. A new peak is one increment, where a
  // set of those ids cost a tree node per alloc (a sixth of a churn replay).
  // Its tag and frame are numbers into labels_: every alloc of a replay
  // passes here, and two strings per held buffer were a fifth of `hbmsim
  // replay`'s time on an untagged trace (built, hashed into the table,
  // moved on every rehash, destroyed on release).
  struct Held {
    uint64_t bytes = 0;  // requested
    EventIndex event;    // its alloc
    uint32_t tag = 0;    // labels_[tag]
    uint32_t frame = 0;  // labels_[frame]
    uint64_t peaks = 0;
  };
  bool BornAfterPeak(const Held& h) const { return h.peaks == peaks_; }
  // The number of `label`, one more buffer holding it. "(untagged)" and ""
  // are 0 and 1 and always there; any other label is dropped with the last
  // buffer that holds it, so memory stays with the held set, never with how
  // many labels the trace ever used.
  uint32_t Hold(std::string_view label);
  void Unhold(uint32_t label);
  void Unhold(const Held& h) {
    Unhold(h.tag);
    Unhold(h.frame);
  }
  HeldBuffer Unpack(uint64_t id, const Held& h) const;
  // A new peak at `event`: everything held now is held at it.
  void NewPeak(EventIndex event);

  struct Label {
    std::string text;
    uint64_t holders = 0;  // held buffers and those kept for the peak
  };
  std::vector<Label> labels_;                              // tags and frames, each once
  std::vector<uint32_t> free_labels_;                      // indices of dropped labels, to reuse
  uint32_t last_hold_ = 1;                                 // the label Hold found last ("" at first)
  absl::flat_hash_map<std::string, uint32_t> label_ids_;  // text -> its index in labels_
  LiveIdTable<uint64_t, Held> held_;  // id -> buffer (iterated only to copy, then sorted)
  uint64_t held_bytes_ = 0;
  uint64_t peak_bytes_ = 0;
  uint64_t peaks_ = 0;  // new peaks so far
  std::optional<EventIndex> peak_event_;
  // Held at the peak, released since, each once (a buffer placed again after
  // the peak is born after it); in release order (AtPeak sorts).
  std::vector<std::pair<uint64_t, Held>> died_after_peak_;
  // The last alloc seen, so OnFailure (which follows OnAlloc) knows its tag.
  std::optional<FailedRequest> pending_;
  std::optional<MemoryBreakdown> at_failure_;
  std::optional<FailedRequest> failed_;
};

// The report section: "Where the memory went" at the peak and at the first
// failure, one table per grouping (top `rows` groups, the rest summed), then
// the largest buffers. Bytes exact with human units beside them. The first
// failed request is named in one line unless the caller says the report has
// shown it already (`replay`'s "Failing request:" block, with its stack).
std::string RenderMemoryAttributionText(const MemoryAttribution& a, size_t rows = 10,
                                        bool name_failed_request = true);
// {"peak": {...}, "first_failure": {...} | null, "failed_request": {...} | null},
// each breakdown {"event", "held_bytes", "held_buffers", "by_tag": [{"key",
// "bytes", "buffers", "share"}], "by_op", "by_frame", "largest": [{"id",
// "bytes", "event", "tag", "frame"}]}.
std::string RenderMemoryAttributionJson(const MemoryAttribution& a);
// The same as a value, for reports that embed it (the replay's --json `memory`).
nlohmann::json MemoryAttributionJson(const MemoryAttribution& a);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_MEMORY_ATTRIBUTION_H_
