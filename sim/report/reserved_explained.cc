#include "sim/report/reserved_explained.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace hbmsim {
namespace {

constexpr std::string_view kNoFrameOrTag = "(untagged)";
// A live block no alloc of the replay placed: the recording's start state.
constexpr std::string_view kStartState = "(start state)";

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
  const auto [at, added] = labels_.TryInsert(e.id, label);
  if (!added) *at = label;
  NotePeakCandidate(index);
}

void ReservedExplainer::OnRelease(EventIndex index, const Event& e) {
  if (uint32_t* label = labels_.Find(e.id)) labels_.Erase(label);
}

void ReservedExplainer::OnFailure(const FailureRecord& f) {
  if (!first_failure_ && !only_peak_) first_failure_ = Explain(f.event);
}

void ReservedExplainer::OnPolicyEvent(EventIndex index, const PolicyEvent& e) {
  if (e.kind == PolicyEventKind::kRegionAdded) regions_added_.push_back(e.offset.value());
  if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kRegionWhole) creators_.erase(e.offset.value());
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
                               const std::map<uint64_t, RegionCreator>* creators, size_t largest_cached) {
  std::map<std::string, ReservedPart> by_label;  // ordered: ties fall back to the label
  const ReservedWalk walk = WalkReserved(a, largest_cached, [&](const BlockInfo& b) {
    const std::string key = label(b);
    ReservedPart& part = by_label[key];
    part.key = key;
    part.bytes += std::min(b.requested, b.size);
    ++part.blocks;
  });
  ReservedMoment m;
  m.event = event;
  m.reserved = walk.reserved;
  m.allocated = walk.in_use;
  for (auto& [key, part] : by_label) {
    part.cause = "requested";
    m.parts.push_back(std::move(part));
  }
  std::stable_sort(m.parts.begin(), m.parts.end(),
                   [](const ReservedPart& x, const ReservedPart& y) { return x.bytes > y.bytes; });
  m.parts.insert(m.parts.end(), walk.parts.begin(), walk.parts.end());
  for (const CachedBlock& b : walk.largest_free) {
    CachedBlockExplained x{b, std::nullopt};
    if (creators != nullptr) {
      if (const auto it = creators->find(b.region_base.value()); it != creators->end()) x.created_by = it->second;
    }
    m.largest_cached.push_back(std::move(x));
  }
  return m;
}

ReservedMoment ReservedExplainer::Explain(EventIndex event) const {
  return ExplainReserved(
      policy_, event,
      [this](const BlockInfo& b) {
        const uint32_t* found = labels_.Find(b.id);
        return found != nullptr ? label_texts_[*found] : std::string(kStartState);
      },
      &creators_, kLargestCached);
}

}  // namespace hbmsim
