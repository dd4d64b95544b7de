#include "sim/report/replay_recorder.h"

namespace hbmsim::sim {

void ReplayRecorder::OnAlloc(EventIndex index, const Event& e, const AllocResult& r) {
  if (r.ok()) {  // placed allocs cost one test here: the replay's hot path
    zero_byte_allocs_ += e.bytes.is_zero();
    return;
  }
  pending_event_ = index;
  pending_.tag.assign(e.tag);
  pending_.shape = e.shape ? FormatShape(*e.shape) : std::string();
}

void ReplayRecorder::OnFailure(const FailureRecord& f) {
  const bool labelled = f.event_kind == EventKind::kAlloc && pending_event_ == f.event;
  if (failures_.empty()) {
    first_failure_dump_ = policy_.texts.at_failure(allocator_, f);
    program_mark_before_first_ = last_program_mark_;
    if (labelled) KeepFirstFrames();
  }
  static const FailureLabels kNone;
  const FailureLabels& labels = labelled ? pending_ : kNone;
  if (sink_ != nullptr) sink_->Add(f, labels, last_mark_);
  if (failures_.size() < kKeptFailures) {
    failures_.push_back(f);
    labels_.push_back(labels);
    marks_before_.push_back(last_mark_);
    program_marks_before_.push_back(last_program_mark_);
  }
  if (f.kind == AllocStatus::kFragmentation) {
    ++fragmentation_;
  } else {
    ++oom_;
  }
}

void ReplayRecorder::KeepFirstFrames() {
  const ContextTable* table = reader_ != nullptr ? reader_->context_table() : nullptr;
  if (table == nullptr) return;
  for (uint32_t id : table->list(reader_->context().frames)) first_frames_.push_back(table->frame(id));
}

void ReplayRecorder::OnMark(EventIndex, std::string_view label) {
  last_mark_.assign(label);
  if (reader_ == nullptr || !reader_->context().allocator_action) last_program_mark_.assign(label);
}

void ReplayRecorder::OnPolicyEvent(EventIndex index, const PolicyEvent& e) {
  const size_t k = static_cast<size_t>(e.kind);
  if (k < policy_events_.size()) ++policy_events_[k];
}

std::vector<std::pair<std::string_view, uint64_t>> ReplayRecorder::PolicyEventCounts() const {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  for (size_t k = 0; k < policy_events_.size(); ++k) {
    if (policy_events_[k] > 0)
      out.emplace_back(PolicyEventKindName(static_cast<PolicyEventKind>(k)), policy_events_[k]);
  }
  return out;
}

}  // namespace hbmsim::sim
