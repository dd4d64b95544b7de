#include "sim/report/replay_recorder.h"

#include "sim/report/failure_dump.h"

namespace hbmsim {

void ReplayRecorder::OnFailure(const FailureRecord& f) {
  if (failures_.empty()) first_failure_dump_ = MemoryDumpAtFailure(allocator_, f);
  if (failures_.size() < kKeptFailures) {
    failures_.push_back(f);
    marks_before_.push_back(last_mark_);
  }
  if (f.kind == AllocStatus::kFragmentation) {
    ++fragmentation_;
  } else {
    ++oom_;
  }
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

}  // namespace hbmsim
