#include "sim/report/memory_attribution.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hbmsim::sim {
namespace {

constexpr std::string_view kUntagged = "(untagged)";

// Groups `held` by `key`, largest first, ties by key (never by hash order).
template <typename KeyFn>
std::vector<MemoryGroup> Group(const std::vector<const HeldBuffer*>& held, uint64_t total, KeyFn key) {
  std::map<std::string, MemoryGroup> groups;
  for (const HeldBuffer* b : held) {
    const std::string k = key(*b);
    if (k.empty()) continue;
    MemoryGroup& g = groups[k];
    g.key = k;
    g.bytes += b->bytes;
    ++g.buffers;
  }
  std::vector<MemoryGroup> out;
  out.reserve(groups.size());
  for (auto& [k, g] : groups) {
    g.share = total == 0 ? 0 : static_cast<double>(g.bytes) / static_cast<double>(total);
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const MemoryGroup& a, const MemoryGroup& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace

std::string OpOfTag(std::string_view tag) {
  size_t end = tag.size();
  while (end > 0 && tag[end - 1] >= '0' && tag[end - 1] <= '9') --end;
  if (end > 1 && end < tag.size() && (tag[end - 1] == '.' || tag[end - 1] == '_')) {
    return std::string(tag.substr(0, end - 1));
  }
  return std::string(tag);
}

MemoryAttribution::MemoryAttribution(size_t top_buffers, FrameFn frame)
    : top_buffers_(top_buffers), frame_(std::move(frame)), labels_{{std::string(kUntagged), 0}, {"", 0}} {}

uint32_t MemoryAttribution::Hold(std::string_view label) {
  if (label.empty()) return 1;  // nearly every frame of a trace without stacks
  // A run of allocs with one tag finds it without hashing. A dropped label's
  // text is "", never equal to this one.
  if (labels_[last_hold_].text == label) {
    ++labels_[last_hold_].holders;
    return last_hold_;
  }
  // absl's string_view is not std's here: look up through it, copy only a new label.
  auto at = label_ids_.find(absl::string_view(label.data(), label.size()));
  if (at == label_ids_.end()) {
    uint32_t id;
    if (free_labels_.empty()) {
      id = static_cast<uint32_t>(labels_.size());
      labels_.push_back({std::string(label), 0});
    } else {
      id = free_labels_.back();
      free_labels_.pop_back();
      labels_[id].text = std::string(label);
    }
    at = label_ids_.emplace(labels_[id].text, id).first;
  }
  ++labels_[at->second].holders;
  last_hold_ = at->second;
  return at->second;
}

void MemoryAttribution::Unhold(uint32_t label) {
  if (label < 2 || --labels_[label].holders > 0) return;
  label_ids_.erase(labels_[label].text);
  labels_[label].text = std::string();
  free_labels_.push_back(label);
}

HeldBuffer MemoryAttribution::Unpack(uint64_t id, const Held& h) const {
  return HeldBuffer{id, h.bytes, h.event, labels_[h.tag].text, labels_[h.frame].text};
}

void MemoryAttribution::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  if (!r.ok()) {
    const std::string tag = e.tag.empty() ? std::string(kUntagged) : std::string(e.tag);
    pending_ = FailedRequest{index, e.id, e.bytes.value(), r.status, tag, frame_ ? frame_(e) : std::string()};
    return;
  }
  if (e.bytes.is_zero()) return;  // holds nothing
  const uint32_t tag = e.tag.empty() ? 0 : Hold(e.tag);
  const uint32_t frame = frame_ ? Hold(frame_(e)) : 1;
  const Held h{e.bytes.value(), index, tag, frame, peaks_};
  const auto [at, added] = held_.TryInsert(e.id, h);
  if (!added) {  // the engine refuses a live id twice; were one let through, the newer wins
    held_bytes_ -= at->bytes;
    Unhold(*at);
    *at = h;
  }
  held_bytes_ += e.bytes.value();
  if (held_bytes_ > peak_bytes_) NewPeak(index);  // this buffer included
}

// The peak counts from the state a recording's start state leaves.
void MemoryAttribution::OnStartStateBuilt(EventIndex last) { NewPeak(last); }

void MemoryAttribution::NewPeak(EventIndex event) {
  peak_bytes_ = held_bytes_;
  peak_event_ = event;
  ++peaks_;
  for (const auto& [id, h] : died_after_peak_) Unhold(h);
  died_after_peak_.clear();
}

void MemoryAttribution::OnRelease(EventIndex, const Event& e) {
  Held* h = held_.Find(e.id);
  if (h == nullptr) return;  // its alloc failed or took 0 bytes
  held_bytes_ -= h->bytes;
  if (BornAfterPeak(*h)) {
    Unhold(*h);
  } else {
    died_after_peak_.emplace_back(e.id, *h);  // its labels stay held
  }
  held_.Erase(h);
}

void MemoryAttribution::OnFailure(const FailureRecord& f) {
  if (failed_) return;
  if (pending_ && pending_->event == f.event) {
    failed_ = pending_;
  } else {
    // A program load or run: no alloc event carried its labels.
    failed_ = FailedRequest{f.event, f.id, f.requested.value(), f.kind, std::string(kUntagged), ""};
  }
  std::vector<HeldBuffer> buffers;
  buffers.reserve(held_.size());
  held_.ForEach([&](uint64_t id, const Held& h) { buffers.push_back(Unpack(id, h)); });
  std::vector<const HeldBuffer*> held;
  held.reserve(buffers.size());
  for (const HeldBuffer& b : buffers) held.push_back(&b);
  at_failure_ = Breakdown(f.event, held);
}

std::optional<MemoryBreakdown> MemoryAttribution::AtPeak() const {
  if (!peak_event_) return std::nullopt;
  std::vector<HeldBuffer> buffers;
  buffers.reserve(held_.size() + died_after_peak_.size());
  held_.ForEach([&](uint64_t id, const Held& h) {
    if (!BornAfterPeak(h)) buffers.push_back(Unpack(id, h));
  });
  for (const auto& [id, h] : died_after_peak_) buffers.push_back(Unpack(id, h));
  std::vector<const HeldBuffer*> held;
  held.reserve(buffers.size());
  for (const HeldBuffer& b : buffers) held.push_back(&b);
  return Breakdown(*peak_event_, held);
}

MemoryBreakdown MemoryAttribution::Breakdown(EventIndex event,
                                             const std::vector<const HeldBuffer*>& held) const {
  MemoryBreakdown m;
  m.event = event;
  m.held_buffers = held.size();
  for (const HeldBuffer* b : held) m.held_bytes += b->bytes;
  m.by_tag = Group(held, m.held_bytes, [](const HeldBuffer& b) { return b.tag; });
  m.by_op = Group(held, m.held_bytes, [](const HeldBuffer& b) { return OpOfTag(b.tag); });
  m.by_frame = Group(held, m.held_bytes, [](const HeldBuffer& b) { return b.frame; });
  std::vector<const HeldBuffer*> sorted = held;
  std::sort(sorted.begin(), sorted.end(), [](const HeldBuffer* a, const HeldBuffer* b) {
    return std::tie(b->bytes, a->id) < std::tie(a->bytes, b->id);
  });
  if (sorted.size() > top_buffers_) sorted.resize(top_buffers_);
  for (const HeldBuffer* b : sorted) m.largest.push_back(*b);
  return m;
}

}  // namespace hbmsim::sim
