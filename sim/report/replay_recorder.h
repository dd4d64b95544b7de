// The observer behind the text and JSON reports: it counts failures (oom and
// fragmentation) and keeps the first kKeptFailures of them with the labels
// their request carried (tag=, shape=) and the mark before each, which is what
// the reports list; every failure also goes to the FailureSink when one is
// set (the --json report's streamed list, sim/report/failure_spill.h), so
// memory stays bounded whatever the number of failures. It counts policy
// events by kind and renders the memory dump at the FIRST failure, while the
// allocator is still in that state. Given the reader the
// engine reads (WatchReader), it also keeps the first failure's recorded
// stack and tells the marks a program wrote (a step, a phase) from the ones a
// recording adds for its allocator's own actions (segment_map, ...).
#ifndef HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_
#define HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "allocator/core/allocator.h"
#include "sim/config/policy_registry.h"
#include "sim/engine/replay_observer.h"
#include "sim/layer.h"
#include "trace/core/context_table.h"
#include "trace/core/reader.h"

namespace hbmsim::sim {

// What the user's code said about a failed request.
struct FailureLabels {
  std::string tag;    // `tag=` as written; "" when absent
  std::string shape;  // `shape=` in its canonical spelling; "" when absent
};

// Where every failure goes as it happens, with what the reports say about it.
class FailureSink {
 public:
  virtual ~FailureSink() = default;
  virtual void Add(const FailureRecord& f, const FailureLabels& labels, const std::string& mark_before) = 0;
};

class ReplayRecorder : public ReplayObserver {
 public:
  static constexpr size_t kKeptFailures = 64;

  // `policy` is the registry row `allocator` was built from: its texts render
  // the dump at the first failure.
  ReplayRecorder(const Allocator& allocator, const PolicySpec& policy)
      : allocator_(allocator), policy_(policy) {}

  // The reader the engine reads (or the one under its wrappers): its current
  // event's context gives the stack frames and the kind of each mark.
  void WatchReader(const EventReader& reader) { reader_ = &reader; }
  // Every failure, in order, also goes to `sink` (not owned; may be null).
  void SetFailureSink(FailureSink* sink) { sink_ = sink; }

  void OnAlloc(EventIndex index, const Event& e, const AllocResult& r) override;
  void OnFailure(const FailureRecord& f) override;
  void OnPolicyEvent(EventIndex index, const PolicyEvent& e) override;
  void OnMark(EventIndex index, std::string_view label) override;

  // The first min(failure_count(), kKeptFailures) failures, in order.
  const std::vector<FailureRecord>& failures() const { return failures_; }
  uint64_t failure_count() const { return oom_ + fragmentation_; }
  const FailureLabels& labels(size_t i) const { return labels_[i]; }
  // The label of the last `mark` before failures()[i] ("" if none): which
  // step or phase of the job failed.
  const std::string& mark_before(size_t i) const { return marks_before_[i]; }
  // The last mark of the program itself before failure i (never an
  // allocator action the recording logs as a mark, such as a segment_map).
  const std::string& program_mark_before(size_t i) const { return program_marks_before_[i]; }
  // The same, counting only marks the program wrote (never a recording's
  // restatement of its allocator's actions): what the verdict names.
  const std::string& program_mark_before_first() const { return program_mark_before_first_; }
  // The recorded stack of the first failed request, innermost first (empty
  // when the recording has none).
  const std::vector<StackFrame>& first_failure_frames() const { return first_frames_; }
  // Empty when nothing failed.
  const std::string& first_failure_dump() const { return first_failure_dump_; }
  // (kind name, count) for every kind that happened, in enum order.
  std::vector<std::pair<std::string_view, uint64_t>> PolicyEventCounts() const;
  uint64_t oom_failures() const { return oom_; }
  uint64_t fragmentation_failures() const { return fragmentation_; }
  // Allocs of 0 bytes that were served (no memory, usually no block).
  uint64_t zero_byte_allocs() const { return zero_byte_allocs_; }

 private:
  static constexpr size_t kPolicyEventKinds = static_cast<size_t>(PolicyEventKind::kCacheFlush) + 1;
  void KeepFirstFrames();

  const Allocator& allocator_;
  const PolicySpec& policy_;
  const EventReader* reader_ = nullptr;
  FailureSink* sink_ = nullptr;
  std::vector<FailureRecord> failures_;
  std::vector<FailureLabels> labels_;
  std::vector<std::string> marks_before_;
  std::vector<std::string> program_marks_before_;
  std::string last_mark_;
  std::string last_program_mark_;
  std::string program_mark_before_first_;
  // The labels of the last failed alloc, which OnFailure (next) files.
  EventIndex pending_event_;
  FailureLabels pending_;
  std::vector<StackFrame> first_frames_;
  std::string first_failure_dump_;
  std::array<uint64_t, kPolicyEventKinds> policy_events_{};
  uint64_t oom_ = 0;
  uint64_t fragmentation_ = 0;
  uint64_t zero_byte_allocs_ = 0;
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_REPLAY_RECORDER_H_
