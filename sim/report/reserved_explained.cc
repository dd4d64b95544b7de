#include "sim/report/reserved_explained.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace hbmsim::sim {
namespace {

constexpr std::string_view kNoFrameOrTag = "(untagged)";
// A live block no alloc of the replay placed: the recording's start state.
constexpr std::string_view kStartState = "(start state)";

// Splits the parts of free blocks by who freed their bytes, run by run as
// the walk gives them (in address order: the runs of one block come
// together). Labels are counted by number and named only in Rows: a walk
// runs at every new peak and sees every free block.
class FreedByTally {
 public:
  explicit FreedByTally(const FreeHistory& history) : history_(history) {}

  void Add(const FreePiece& p) {
    if (last_ == nullptr || last_cause_ != p.cause || last_key_ != p.key) {
      last_cause_ = p.cause;
      last_key_ = p.key;
      last_ = &parts_[{std::string(p.cause), std::string(p.key)}];
    }
    PartTally& part = *last_;
    uint64_t at = p.offset.value();
    const uint64_t end = (p.offset + p.size).value();
    history_.ranges.ForEachRunIn(p.offset, p.size, [&](const FreedRanges::Run& run) {
      if (run.begin > at) Count(part[kNoFree], p.block, run.begin - at, std::nullopt);
      Count(part[run.who.label], p.block, run.end - run.begin, run.who.event.value());
      at = run.end;
    });
    if (end > at) Count(part[kNoFree], p.block, end - at, std::nullopt);
  }

  // The part's bytes by label, largest first (ties by label); empty when no free block has that part.
  std::vector<FreedBy> Rows(const ReservedPart& p) const {
    std::vector<FreedBy> rows;
    const auto it = parts_.find({p.cause, p.key});
    if (it == parts_.end()) return rows;
    for (const auto& [label, t] : it->second) {
      rows.push_back({label == kNoFree ? std::string(kNotFreedInTrace) : history_.labels[label], t.bytes, t.blocks,
                      DistinctCount(t.frees)});
    }
    std::sort(rows.begin(), rows.end(), [](const FreedBy& x, const FreedBy& y) {
      return x.bytes != y.bytes ? x.bytes > y.bytes : x.label < y.label;
    });
    return rows;
  }

 private:
  static constexpr uint32_t kNoFree = ~uint32_t{0};  // bytes no free of the trace left free
  struct LabelTally {
    Bytes bytes;
    uint64_t blocks = 0;
    std::optional<uint64_t> last_block;
    std::vector<uint64_t> frees;  // the events of the frees, a free once per run it left (counted in Rows)
  };
  using PartTally = std::map<uint32_t, LabelTally>;  // label number -> its bytes

  static void Count(LabelTally& t, Offset block, uint64_t bytes, std::optional<uint64_t> free_event) {
    t.bytes += Bytes(bytes);
    if (t.last_block != block.value()) ++t.blocks;
    t.last_block = block.value();
    if (free_event && (t.frees.empty() || t.frees.back() != *free_event)) t.frees.push_back(*free_event);
  }

  // A vector sorted once per row costs less than a set per label: the tally is made at every new peak.
  static uint64_t DistinctCount(std::vector<uint64_t> events) {
    std::sort(events.begin(), events.end());
    return static_cast<uint64_t>(std::unique(events.begin(), events.end()) - events.begin());
  }

  const FreeHistory& history_;
  std::map<std::pair<std::string, std::string>, PartTally> parts_;
  PartTally* last_ = nullptr;  // the part of the previous run, found without building its key again
  std::string last_cause_, last_key_;  // copies: a FreePiece's views die with its block
};

// The frees that left a cached block free: the last, their number and bytes.
std::optional<BlockFreer> FreerOf(const CachedBlock& b, const FreeHistory& history) {
  std::optional<FreeRecord> last;
  std::set<uint64_t> frees;
  Bytes bytes;
  history.ranges.ForEachRunIn(b.offset, b.size, [&](const FreedRanges::Run& run) {
    if (!last || run.who.event > last->event) last = run.who;
    frees.insert(run.who.event.value());
    bytes += Bytes(run.end - run.begin);
  });
  if (!last) return std::nullopt;
  return BlockFreer{last->event, last->id, history.labels[last->label], frees.size(), bytes};
}

}  // namespace

Bytes ReservedMoment::Sum() const {
  Bytes sum;
  for (const ReservedPart& p : parts) sum += p.bytes;
  return sum;
}

ReservedExplainer::ReservedExplainer(const Allocator& policy, FrameFn frame, PeakWalkBudget budget)
    : policy_(policy), frame_(std::move(frame)), budget_(budget) {}

ReservedExplainer::ReservedExplainer(const Allocator& policy, FrameFn frame, OnlyPeakAt only)
    : policy_(policy), frame_(std::move(frame)), only_peak_(only.event) {}

void ReservedExplainer::BeforeEvent(EventIndex index) {
  regions_added_.clear();
  ++events_seen_;
  if (!pending_peak_) return;
  const EventIndex peak = *pending_peak_;
  pending_peak_.reset();
  if (MayWalkPeak(peak)) {
    WalkPeak(peak);
  } else if (!only_peak_) {
    peak_.reset();  // superseded: shown as an older peak, it would be wrong
    passed_over_peak_ = peak;
  }
}

bool ReservedExplainer::MayWalkPeak(EventIndex index) const {
  if (only_peak_) return index == *only_peak_;
  return walked_blocks_ + last_walk_blocks_ <= budget_.blocks_per_event * events_seen_ + budget_.floor;
}

void ReservedExplainer::WalkPeak(EventIndex index) {
  peak_ = Explain(index);
  passed_over_peak_.reset();
  last_walk_blocks_ = 0;
  for (const ReservedPart& p : peak_->parts) last_walk_blocks_ += p.blocks;
  walked_blocks_ += last_walk_blocks_;
  ++peak_walks_;
}

void ReservedExplainer::AdoptPeak(ReservedMoment peak) {
  peak_ = std::move(peak);
  passed_over_peak_.reset();
}

void ReservedExplainer::NotePeakCandidate(EventIndex index) {
  const Bytes reserved = policy_.ReservedBytes();
  const Bytes allocated(static_cast<uint64_t>(std::max<int64_t>(0, policy_.BytesInUse())));
  if (any_peak_ && std::tie(reserved, allocated) <= std::tie(best_reserved_, best_allocated_)) return;
  any_peak_ = true;
  best_reserved_ = reserved;
  best_allocated_ = allocated;
  pending_peak_ = index;
}

uint32_t ReservedExplainer::Intern(std::string_view label) {
  if (!label_texts_.empty() && label_texts_[last_label_] == label) return last_label_;
  // absl's string_view is not std's here: look up through it, copy only a new label.
  auto it = label_ids_.find(absl::string_view(label.data(), label.size()));
  if (it == label_ids_.end()) {
    it = label_ids_.emplace(std::string(label), static_cast<uint32_t>(label_texts_.size())).first;
    label_texts_.emplace_back(label);
  }
  last_label_ = it->second;
  return last_label_;
}

// The user's top frame, else the tag, else "(untagged)".
uint32_t ReservedExplainer::LabelOf(const Event& e) {
  if (frame_) {
    const std::string frame = frame_(e);
    if (!frame.empty()) return Intern(frame);
  }
  return Intern(e.tag.empty() ? kNoFrameOrTag : e.tag);
}

void ReservedExplainer::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  if (!r.ok()) return;
  const uint32_t label = LabelOf(e);
  for (uint64_t base : regions_added_) creators_[base] = RegionCreator{index, e.id, label_texts_[label]};
  regions_added_.clear();
  // The block holds a buffer again: whoever freed its bytes before no longer explains them.
  const Bytes size = r.has_offset ? r.size : Bytes();
  freed_.Forget(r.offset, size);
  const LiveBuffer live{label, epoch_, r.offset.value(), size.value()};
  const auto [at, added] = labels_.TryInsert(e.id, live);
  if (!added) *at = live;
  NotePeakCandidate(index);
}

void ReservedExplainer::OnRelease(EventIndex index, const Event& e) {
  LiveBuffer* live = labels_.Find(e.id);
  if (live == nullptr) return;
  if (live->epoch == epoch_) freed_.Freed(Offset(live->offset), Bytes(live->size), {index, e.id, live->label});
  labels_.Erase(live);
}

void ReservedExplainer::OnProgramPlaced(EventIndex index, Offset offset, Bytes size) { freed_.Forget(offset, size); }

void ReservedExplainer::OnFailure(const FailureRecord& f) {
  if (!first_failure_ && !only_peak_) first_failure_ = Explain(f.event);
}

void ReservedExplainer::OnPolicyEvent(EventIndex index, const PolicyEvent& e) {
  if (e.kind == PolicyEventKind::kRegionAdded) regions_added_.push_back(e.offset.value());
  if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kRegionWhole) creators_.erase(e.offset.value());
  NoteMemoryChange(e);
}

// Who freed which bytes holds only while the bytes stay free and in place.
void ReservedExplainer::NoteMemoryChange(const PolicyEvent& e) {
  switch (e.kind) {
    case PolicyEventKind::kRegionReleased:  // a segment freed, pages unmapped: the bytes left the device
    case PolicyEventKind::kProgramReloaded:  // a program placed again, over free bytes
      freed_.Forget(e.offset, e.bytes);
      break;
    case PolicyEventKind::kDefragmentation:  // live buffers moved: their recorded ranges are stale
      freed_.Clear();
      ++epoch_;
      break;
    default:
      break;
  }
}

void ReservedExplainer::OnStartStateBuilt(EventIndex last) {
  // The fillers that laid out a profile's pool were not the job's: the peak
  // counts from the state they leave.
  any_peak_ = false;
  peak_.reset();
  pending_peak_.reset();
  passed_over_peak_.reset();
  NotePeakCandidate(last);
}

void ReservedExplainer::Finish(EventIndex last) {
  if (pending_peak_ && (!only_peak_ || *pending_peak_ == *only_peak_)) WalkPeak(*pending_peak_);
  pending_peak_.reset();
  if (!only_peak_) end_ = Explain(last);
}

ReservedMoment ExplainReserved(const Allocator& a, EventIndex event, const BlockLabelFn& label,
                               const std::map<uint64_t, RegionCreator>* creators, size_t largest_cached,
                               const FreeHistory* freed) {
  std::map<std::string, ReservedPart> by_label;  // ordered: ties fall back to the label
  std::optional<FreedByTally> tally;
  if (freed != nullptr) tally.emplace(*freed);
  ReservedPart* last = nullptr;  // neighbours often share a label: found again without a map search
  const auto on_live = [&](const BlockInfo& b) {
    std::string key = label(b);
    if (last == nullptr || last->key != key) {
      last = &by_label[key];
      if (last->key.empty()) last->key = std::move(key);
    }
    last->bytes += std::min(b.requested, b.size);
    ++last->blocks;
  };
  const ReservedWalk walk = WalkReserved(a, largest_cached, on_live, [&](const FreePiece& p) {
    if (tally) tally->Add(p);
  });
  ReservedMoment m;
  m.event = event;
  m.reserved = walk.reserved;
  m.allocated = walk.in_use;
  m.frees_followed = freed != nullptr;
  for (auto& [key, part] : by_label) {
    part.cause = "requested";
    m.parts.push_back({std::move(part), {}});
  }
  std::stable_sort(m.parts.begin(), m.parts.end(),
                   [](const ExplainedPart& x, const ExplainedPart& y) { return x.bytes > y.bytes; });
  for (const ReservedPart& p : walk.parts) m.parts.push_back({p, tally ? tally->Rows(p) : std::vector<FreedBy>{}});
  for (const CachedBlock& b : walk.largest_free) {
    CachedBlockExplained x{b, std::nullopt, std::nullopt};
    if (creators != nullptr) {
      if (const auto it = creators->find(b.region_base.value()); it != creators->end()) x.created_by = it->second;
    }
    if (freed != nullptr) x.freed_by = FreerOf(b, *freed);
    m.largest_cached.push_back(std::move(x));
  }
  return m;
}

ReservedMoment ReservedExplainer::Explain(EventIndex event) const {
  const FreeHistory history{freed_, label_texts_};
  return ExplainReserved(
      policy_, event,
      [this](const BlockInfo& b) {
        const LiveBuffer* found = labels_.Find(b.id);
        return found != nullptr ? label_texts_[found->label] : std::string(kStartState);
      },
      &creators_, kLargestCached, &history);
}

}  // namespace hbmsim::sim
