// The observer behind the text and JSON reports: it counts failures (oom and
// fragmentation), keeps the first kKeptFailures of them with the mark before
// each (what the reports list), counts policy events by kind, and renders the
// memory dump at the FIRST failure, while the allocator is still in that
// state. Memory stays bounded whatever the number of failures; the JSON's
// full list is streamed through a FailureSpill (failure_spill.h) instead.
#ifndef HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_
#define HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "allocator/core/allocator.h"
#include "sim/engine/replay_observer.h"

namespace hbmsim {

class ReplayRecorder : public ReplayObserver {
 public:
  explicit ReplayRecorder(const Allocator& allocator) : allocator_(allocator) {}

  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  void OnMark(EventIndex index, std::string_view label) override { last_mark_.assign(label); }

  static constexpr size_t kKeptFailures = 64;

  // The first min(failure_count(), kKeptFailures) failures, in order.
  const std::vector<FailureRecord>& failures() const { return failures_; }
  uint64_t failure_count() const { return oom_ + fragmentation_; }
  // The label of the last `mark` before failures()[i] ("" if none): which
  // step or phase of the job failed.
  const std::string& mark_before(size_t i) const { return marks_before_[i]; }
  // Empty when nothing failed.
  const std::string& first_failure_dump() const { return first_failure_dump_; }
  // (kind name, count) for every kind that happened, in enum order.
  std::vector<std::pair<std::string_view, uint64_t>> PolicyEventCounts() const;
  uint64_t oom_failures() const { return oom_; }
  uint64_t fragmentation_failures() const { return fragmentation_; }

 private:
  static constexpr size_t kPolicyEventKinds = static_cast<size_t>(PolicyEventKind::kCacheFlush) + 1;
  const Allocator& allocator_;
  std::vector<FailureRecord> failures_;
  std::vector<std::string> marks_before_;
  std::string last_mark_;
  std::string first_failure_dump_;
  std::array<uint64_t, kPolicyEventKinds> policy_events_{};
  uint64_t oom_ = 0;
  uint64_t fragmentation_ = 0;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_
