// Reserved, explained: at the peak of reserved, at the first failure and at
// the end of a replay, the policy's reserved (pool) bytes split into parts
// that add up exactly (allocator/core/reserved_parts.h):
//
//   reserved = Σ requested by label   (the user's top frame, else the tag)
//            + rounding               (the policy's name: "padding" on a TPU)
//            + Σ the other blocks by the cause the policy gives them
//              (Allocator::CauseOf: inactive_split, free_chunk, gap, ...)
//
// and for the largest cached blocks the allocation that created the region
// they lie in (its event, buffer id and label): the request whose
// cudaMalloc / region growth made the memory the cache now keeps.
//
// Each part of free blocks is split further by who freed its bytes
// (freed_ranges.h): the label of the buffer whose free left them free, so
// inactive_split says which frees split its segments; each large cached block
// names the last free that made it.
//
// The peak is the first moment (after an alloc) at which (reserved,
// allocated) is largest, compared reserved first: the most the policy held
// from the device, and of those moments the one where its live blocks held
// the most, so a pool that never shrinks (BFC without growth, a TPU's HBM)
// is explained where it is fullest. A new peak is walked just before the
// next event changes the state (ReplayObserver::BeforeEvent).
//
// Why a budget: a job whose memory ramps up (a forward pass keeping its
// activations) makes a new peak at nearly every alloc, and each walk visits
// every block, so walking them all costs O(events x blocks): 12,000 events
// holding 4,000 buffers took 1.1 s beside 0.06 s for the replay itself. The
// walks may visit at most
//
//   walked blocks <= PeakWalkBudget::blocks_per_event x events seen + floor
//
// and a peak that would overdraw is passed over (its event kept). If the
// last peak was passed over, PeakToWalkAgain() names it and the caller
// replays once more with an explainer that walks that one moment only
// (OnlyPeakAt; sim/scenario/peak_walk.h), then AdoptPeak()s it: an exact
// answer for at most one replay and a bounded number of walks.
//
// The first failure is walked when it is reported, the policy then in the
// state its failure message describes (after its own retries: PyTorch's
// freed cache, BFC's garbage collection). The end is walked by Finish().
#ifndef HBMSIM_SIM_REPORT_RESERVED_EXPLAINED_H_
#define HBMSIM_SIM_REPORT_RESERVED_EXPLAINED_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "allocator/core/allocator.h"
#include "nlohmann/json.hpp"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "sim/report/freed_ranges.h"
#include "trace/core/live_id_table.h"

namespace hbmsim::sim {

// Who made a region: the alloc whose request obtained it from the device.
struct RegionCreator {
  EventIndex event;
  uint64_t id = 0;
  std::string label;
};

// The frees that left a cached block's bytes free: the last of them, how
// many there were and the bytes they cover (the rest was never freed in the trace).
struct BlockFreer {
  EventIndex event;
  uint64_t id = 0;
  std::string label;
  uint64_t frees = 0;
  Bytes bytes;
};

struct CachedBlockExplained {
  CachedBlock block;
  std::optional<RegionCreator> created_by;  // unset: obtained before the trace (a start state, a preallocated pool)
  std::optional<BlockFreer> freed_by;       // unset: none of its bytes was freed in the trace
};

// The bytes of one part of free blocks that the frees of one label left free
// (kNotFreedInTrace for bytes no free made): in `blocks` free blocks, by
// `frees` frees.
struct FreedBy {
  std::string label;
  Bytes bytes;
  uint64_t blocks = 0;
  uint64_t frees = 0;
  bool operator==(const FreedBy&) const = default;
};

// A part, and for a part of free blocks its bytes by who freed them: largest
// first (ties by label), adding up to the part's bytes. Empty for the other parts.
struct ExplainedPart : ReservedPart {
  std::vector<FreedBy> freed_by;
};

// One moment, explained. requested + Σ parts bytes = reserved, exactly.
struct ReservedMoment {
  EventIndex event;
  Bytes reserved;
  Bytes allocated;  // the live blocks' sizes: requested + rounding
  // "requested" parts by label first (largest first, ties by label), then
  // the walk's parts (rounding, then the causes largest first).
  std::vector<ExplainedPart> parts;
  std::vector<CachedBlockExplained> largest_cached;
  // Whether the frees were followed (a replay; not a state read without its
  // trace, as `inspect` reads one): only then does an unset freed_by mean
  // that no free of the trace made a block.
  bool frees_followed = false;
  Bytes Sum() const;
};

// The label of a live block ("" never: the caller says what an unknown one is).
using BlockLabelFn = std::function<std::string(const BlockInfo&)>;
// `a` as it is now, its requested bytes split by `label`; `creators` (may be
// null) names who made each region, by its base; `freed` (may be null) who
// freed the free bytes.
ReservedMoment ExplainReserved(const Allocator& a, EventIndex event, const BlockLabelFn& label,
                               const std::map<uint64_t, RegionCreator>* creators, size_t largest_cached = 5,
                               const FreeHistory* freed = nullptr);

// What the peak walks may cost (the model above).
struct PeakWalkBudget {
  uint64_t blocks_per_event = 2;
  uint64_t floor = uint64_t{1} << 16;
};

class ReservedExplainer : public ReplayObserver {
 public:
  // The one peak a second replay walks (PeakToWalkAgain of the first).
  struct OnlyPeakAt {
    EventIndex event;
  };

  // The label of an alloc: its top user frame ("" when none), as
  // MemoryAttribution's FrameFn; the tag stands in when it gives "".
  using FrameFn = std::function<std::string(const Event&)>;
  static constexpr size_t kLargestCached = 5;

  // `policy` is the policy itself (not an adapter around it): its memory map
  // is walked. It must outlive this observer.
  ReservedExplainer(const Allocator& policy, FrameFn frame, PeakWalkBudget budget = {});
  // Walks only the peak at `only.event` (no failure, no end): the second
  // replay of a run whose explainer passed that peak over.
  ReservedExplainer(const Allocator& policy, FrameFn frame, OnlyPeakAt only);

  bool needs_before_event() const override { return true; }
  void BeforeEvent(EventIndex index) override;
  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnRelease(EventIndex index, const Event& e) override;
  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  void OnProgramPlaced(EventIndex index, Offset offset, Bytes size) override;
  void OnStartStateBuilt(EventIndex last) override;
  // After the replay: walks the end state (and a peak not walked yet).
  void Finish(EventIndex last);

  // Unset while PeakToWalkAgain() is set: an older peak is never shown.
  const std::optional<ReservedMoment>& peak() const { return peak_; }
  // After Finish: the peak passed over to keep the walks bounded, if the
  // last peak was; replay again with OnlyPeakAt and AdoptPeak its peak().
  const std::optional<EventIndex>& PeakToWalkAgain() const { return passed_over_peak_; }
  void AdoptPeak(ReservedMoment peak);
  uint64_t peak_walks() const { return peak_walks_; }
  const std::optional<ReservedMoment>& first_failure() const { return first_failure_; }
  const std::optional<ReservedMoment>& end() const { return end_; }

  // The moment as the policy is now (for `inspect` and tests): labels from
  // the allocs this observer saw, "(start state)" for the others.
  ReservedMoment Explain(EventIndex event) const;
  // The freed ranges recorded now (tests: they stay as few as the free runs).
  size_t freed_ranges() const { return freed_.size(); }

 private:
  void NotePeakCandidate(EventIndex index);
  bool MayWalkPeak(EventIndex index) const;
  void WalkPeak(EventIndex index);
  // The number of `label` in label_texts_: a live buffer keeps a number, not
  // a string, as MemoryAttribution does (every alloc of a replay passes here,
  // so a repeat of the last label is found without hashing).
  uint32_t Intern(std::string_view label);
  uint32_t LabelOf(const Event& e);
  void NoteMemoryChange(const PolicyEvent& e);

  const Allocator& policy_;
  FrameFn frame_;
  std::vector<std::string> label_texts_;                // every label seen, each once
  absl::flat_hash_map<std::string, uint32_t> label_ids_;  // text -> its index in label_texts_
  uint32_t last_label_ = 0;                             // the label Intern returned last
  // What a live buffer's free needs: its label, and where it lay, valid
  // while `epoch` is the current one (live buffers moved since: unknown).
  struct LiveBuffer {
    uint32_t label = 0;
    uint32_t epoch = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  LiveIdTable<uint64_t, LiveBuffer> labels_;  // live buffer id -> label and range (looked up, never iterated)
  FreedRanges freed_;                         // who freed the free bytes
  uint32_t epoch_ = 0;                        // +1 each time the policy moves live buffers
  std::map<uint64_t, RegionCreator> creators_;         // region base -> its creator
  std::vector<uint64_t> regions_added_;                // bases obtained while serving the current event
  std::optional<EventIndex> pending_peak_;             // a new peak not walked yet
  std::optional<EventIndex> passed_over_peak_;         // the latest peak, not walked (the budget)
  std::optional<EventIndex> only_peak_;                // OnlyPeakAt's event
  PeakWalkBudget budget_;
  uint64_t events_seen_ = 0;
  uint64_t walked_blocks_ = 0;     // by the peak walks so far
  uint64_t last_walk_blocks_ = 0;  // the next walk's cost, estimated by the last one's
  uint64_t peak_walks_ = 0;
  Bytes best_reserved_, best_allocated_;
  bool any_peak_ = false;
  std::optional<ReservedMoment> peak_, first_failure_, end_;
};

// The text section: the three moments, each a table of its parts (the top
// `rows` labels of requested, the rest summed), and its largest cached
// blocks with their creators. `policy` names the policy in the title.
std::string RenderReservedText(const ReservedExplainer& x, std::string_view policy, size_t rows = 8);
// {"peak"|"first_failure"|"end": {"event", "reserved", "allocated", "parts": [{"cause", "key"?, "bytes",
// "blocks", "freed_by"?: [{"label", "bytes", "blocks", "frees"}]}], "largest_cached": [{"offset", "size",
// "cause", "key"?, "inner"?: {"cause", "offset", "bytes"}, "created_by": {"event", "id", "label"} | null,
// "freed_by"?: {"event", "id", "label", "frees", "bytes"} | null}]} | null} (a cached block's freed_by absent
// when the frees were not followed: `inspect`); each moment's parts' bytes add up to its reserved, and a
// part's freed_by bytes to the part's.
nlohmann::ordered_json ReservedExplainedJson(const ReservedExplainer& x);
// One moment's lines, under "  TITLE (event N): ..." (`inspect` shows one).
std::string RenderReservedMomentText(std::string_view title, const ReservedMoment& m, size_t rows = 8);
nlohmann::ordered_json ReservedMomentJson(const ReservedMoment& m);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_RESERVED_EXPLAINED_H_
