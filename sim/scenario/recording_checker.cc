#include "sim/scenario/recording_checker.h"

#include <algorithm>

#include "absl/container/btree_map.h"
#include "fmt/format.h"

namespace hbmsim::sim {

uint64_t SegmentComparison::matched() const {
  uint64_t n = 0;
  for (size_t k = 0; k < recorded.size() && k < simulated.size(); ++k) {
    n += recorded[k].addr == simulated[k].addr && recorded[k].size == simulated[k].size;
  }
  return n;
}

std::optional<size_t> SegmentComparison::first_mismatch() const {
  const size_t n = std::max(recorded.size(), simulated.size());
  for (size_t k = 0; k < n; ++k) {
    if (k >= recorded.size() || k >= simulated.size()) return k;
    if (recorded[k].addr != simulated[k].addr || recorded[k].size != simulated[k].size) return k;
  }
  return std::nullopt;
}

void RecordingChecker::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  if (figures_) {
    figures_->Placed(e.id, r);
    if (const std::optional<RecordedFigures> f = reader_.current_figures()) {
      figures_->AfterAlloc(index.value(), *f, r, policy_);
    }
  }
  if (e.tag == "preexisting") return;
  if (e.tag == "oom") {
    OnRecordedOom(index, e, r);
    return;
  }
  if (!e.addr) return;
  ++allocs_total_;
  if (r.ok() && r.has_offset && r.offset.value() == *e.addr) {
    ++allocs_matched_;
    return;
  }
  if (first_alloc_mismatch_) return;
  const std::string simulated =
      r.ok() ? fmt::format("{:#x}", r.offset.value()) : std::string(AllocStatusName(r.status));
  first_alloc_mismatch_ = AllocMismatch{index.value(), reader_.current_entry_index(), *e.addr, simulated};
}

void RecordingChecker::OnRelease(EventIndex index, const Event& e) {
  if (!figures_) return;
  if (const std::optional<RecordedFigures> f = reader_.current_figures()) {
    figures_->AfterRelease(index.value(), e.id, *f, policy_);
  } else {
    figures_->Released(e.id);
  }
}

// Called right after the request, while the policy still holds that state.
void RecordingChecker::OnRecordedOom(EventIndex index, const Event& e, const AllocResult& r) {
  RecordedOom oom;
  oom.event = index.value();
  oom.entry = reader_.current_entry_index();
  oom.size = e.bytes;
  if (const std::optional<SideEntry> t = reader_.current_side()) oom.device_free = Bytes(t->device_free);
  oom.result = r;
  if (!r.ok() && hooks_.oom_message) oom.message = hooks_.oom_message(policy_);
  ooms_.push_back(std::move(oom));
}

void RecordingChecker::OnPolicyEvent(EventIndex index, const PolicyEvent& e) {
  const SegmentRecord rec{e.offset.value(), e.bytes.value(), index.value(), std::nullopt};
  if (e.kind == PolicyEventKind::kRegionAdded) segment_allocs_.simulated.push_back(rec);
  if (e.kind == PolicyEventKind::kRegionExtended && e.detail == kRegionPagesMapped)
    maps_.simulated.push_back(rec);
  if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kRegionWhole) {
    segment_frees_.simulated.push_back(rec);
  }
  if (e.kind == PolicyEventKind::kRegionReleased && e.detail == kRegionPagesUnmapped) {
    unmaps_.simulated.push_back(rec);
  }
}

void RecordingChecker::OnMark(EventIndex index, std::string_view) {
  const std::optional<SideEntry> t = reader_.current_side();
  if (!t) return;
  const SegmentRecord rec{t->addr, t->size, index.value(), reader_.current_entry_index()};
  switch (t->action) {
    case SideAction::kSegmentAlloc:
      segment_allocs_.recorded.push_back(rec);
      return;
    case SideAction::kSegmentMap:
      maps_.recorded.push_back(rec);
      return;
    case SideAction::kSegmentUnmap:
      unmaps_.recorded.push_back(rec);
      return;
    case SideAction::kSegmentFree:
      segment_frees_.recorded.push_back(rec);
      // More segments freed than the policy released: no ladder of ours
      // explains it, so it is the user's empty_cache().
      if (hooks_.empty_cache && segment_frees_.simulated.size() < segment_frees_.recorded.size()) {
        hooks_.empty_cache(policy_);
        ++empty_cache_calls_;
      }
      return;
    default:
      return;
  }
}

namespace {

// Live blocks of the final state by start address.
class LiveBlocks : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo&) override {}
  void OnBlock(const BlockInfo& b) override {
    if (b.state == BlockState::kInUse || b.state == BlockState::kPendingFree) {
      by_addr.emplace(b.offset.value(), b);
    }
  }
  absl::btree_map<uint64_t, BlockInfo> by_addr;
};

}  // namespace

void RecordingChecker::CompareHistory(const Allocator& final_state, const HistoryAddresses& recorded) {
  history_past_ = recorded.past;
  if (recorded.live.empty()) return;
  LiveBlocks live;
  final_state.WalkMemoryMap(live);
  for (const HistoryAddresses::Live& h : recorded.live) {
    ++history_total_;
    auto it = live.by_addr.find(h.addr);
    if (it != live.by_addr.end() && it->second.requested.value() == h.requested) {
      ++history_matched_;
      continue;
    }
    if (first_history_mismatch_) continue;
    const std::string simulated = it == live.by_addr.end() ? std::string("no live block starts there")
                                                           : fmt::format("a live block of {} requested bytes",
                                                                         it->second.requested.value());
    first_history_mismatch_ = HistoryMismatch{h.addr, h.requested, simulated};
  }
}

RecordedCheck RecordingChecker::Check() const {
  RecordedCheck c;
  c.allocs_total = allocs_total_ + history_total_;
  c.allocs_matched = allocs_matched_ + history_matched_;
  c.segments_total = segment_allocs_.recorded.size() + maps_.recorded.size();
  c.segments_matched = segment_allocs_.matched() + maps_.matched();
  return c;
}

}  // namespace hbmsim::sim
