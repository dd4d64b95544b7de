#include "sim/report/memory_attribution.h"

#include <algorithm>
#include <tuple>

namespace hbmsim {
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
    : top_buffers_(top_buffers), frame_(std::move(frame)) {}

void MemoryAttribution::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  const std::string tag = e.tag.empty() ? std::string(kUntagged) : std::string(e.tag);
  const std::string frame = frame_ ? frame_(e) : std::string();
  if (!r.ok()) {
    pending_ = FailedRequest{index, e.id, e.bytes.value(), r.status, tag, frame};
    return;
  }
  if (e.bytes.is_zero()) return;  // holds nothing
  held_[e.id] = Held{HeldBuffer{e.id, e.bytes.value(), index, tag, frame}, peaks_};
  held_bytes_ += e.bytes.value();
  if (held_bytes_ > peak_bytes_) {
    peak_bytes_ = held_bytes_;
    peak_event_ = index;
    ++peaks_;  // everything held now, this buffer included, is held at the peak
    died_after_peak_.clear();
  }
}

void MemoryAttribution::OnRelease(EventIndex, const Event& e) {
  auto it = held_.find(e.id);
  if (it == held_.end()) return;  // its alloc failed or took 0 bytes
  held_bytes_ -= it->second.buffer.bytes;
  if (!BornAfterPeak(it->second)) died_after_peak_[e.id] = std::move(it->second.buffer);
  held_.erase(it);
}

void MemoryAttribution::OnFailure(const FailureRecord& f) {
  if (failed_) return;
  if (pending_ && pending_->event == f.event) {
    failed_ = pending_;
  } else {
    // A program load or run: no alloc event carried its labels.
    failed_ = FailedRequest{f.event, f.id, f.requested.value(), f.kind, std::string(kUntagged), ""};
  }
  std::vector<const HeldBuffer*> held;
  held.reserve(held_.size());
  for (const auto& [id, h] : held_) held.push_back(&h.buffer);
  at_failure_ = Breakdown(f.event, held);
}

std::optional<MemoryBreakdown> MemoryAttribution::AtPeak() const {
  if (!peak_event_) return std::nullopt;
  std::vector<const HeldBuffer*> held;
  held.reserve(held_.size() + died_after_peak_.size());
  for (const auto& [id, h] : held_) {
    if (!BornAfterPeak(h)) held.push_back(&h.buffer);
  }
  for (const auto& [id, b] : died_after_peak_) held.push_back(&b);
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

}  // namespace hbmsim
