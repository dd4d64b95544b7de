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
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "sim/engine/replay_observer.h"

namespace hbmsim {

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
  void OnStartStateBuilt(EventIndex last) override {
    peak_bytes_ = held_bytes_;
    peak_event_ = last;
    ++peaks_;  // everything held now is held at the peak
    died_after_peak_.clear();
  }

  // Nullopt before anything was held.
  std::optional<MemoryBreakdown> AtPeak() const;
  // Nullopt when nothing failed: the state just before the first failed request.
  const std::optional<MemoryBreakdown>& AtFirstFailure() const { return at_failure_; }
  const std::optional<FailedRequest>& first_failure() const { return failed_; }

 private:
  MemoryBreakdown Breakdown(EventIndex event, const std::vector<const HeldBuffer*>& held) const;

  size_t top_buffers_;
  FrameFn frame_;
  // A held buffer and the peak it was placed after: born after the latest
  // peak iff its peaks_ is this one's. A new peak is one increment, where a
  // set of those ids cost a tree node per alloc (a sixth of a churn replay).
  struct Held {
    HeldBuffer buffer;
    uint64_t peaks = 0;
  };
  bool BornAfterPeak(const Held& h) const { return h.peaks == peaks_; }

  absl::flat_hash_map<uint64_t, Held> held_;  // id -> buffer (iterated only to copy, then sorted)
  uint64_t held_bytes_ = 0;
  uint64_t peak_bytes_ = 0;
  uint64_t peaks_ = 0;  // new peaks so far
  std::optional<EventIndex> peak_event_;
  std::map<uint64_t, HeldBuffer> died_after_peak_;  // held at the peak, released since
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

}  // namespace hbmsim

#endif  // HBMSIM_SIM_REPORT_MEMORY_ATTRIBUTION_H_
