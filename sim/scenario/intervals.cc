#include "sim/scenario/intervals.h"

#include "absl/container/flat_hash_map.h"

namespace hbmsim::sim {
namespace {

// Tracks one device's live buffers (programs in their own id space) and
// closes an interval at each free.
class IntervalCollector {
 public:
  void Add(const Event& e, uint64_t index) {
    auto& open = IsProgramEvent(e.kind) ? programs_ : buffers_;
    if (e.kind == EventKind::kAlloc || e.kind == EventKind::kProgramLoad) {
      if (e.bytes.is_zero()) return;
      open[e.id] = intervals_.size();
      intervals_.push_back({index, e.bytes.value(), index, UINT64_MAX});
      return;
    }
    if (e.kind == EventKind::kFree || e.kind == EventKind::kFreeCompleted ||
        e.kind == EventKind::kProgramUnload) {
      auto it = open.find(e.id);
      if (it == open.end()) return;
      intervals_[it->second].end = index;
      open.erase(it);
    }
  }
  std::vector<BufferInterval> Take() { return std::move(intervals_); }

 private:
  std::vector<BufferInterval> intervals_;
  absl::flat_hash_map<uint64_t, size_t> buffers_, programs_;
};

}  // namespace

absl::StatusOr<std::vector<BufferInterval>> ScenarioIntervals(const Scenario& scenario) {
  absl::StatusOr<std::unique_ptr<EventReader>> reader = scenario.Events();
  if (!reader.ok()) return reader.status();
  IntervalCollector collector;
  std::optional<DeviceId> device = scenario.device;
  Event e;
  for (uint64_t index = 0;; ++index) {
    absl::StatusOr<bool> more = (*reader)->Next(e);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (!device) device = e.device;
    if (e.device == *device) collector.Add(e, index);
  }
  return collector.Take();
}

}  // namespace hbmsim::sim
