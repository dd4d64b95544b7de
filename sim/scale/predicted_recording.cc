#include "sim/scale/predicted_recording.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::scale {
namespace {

struct Shared {
  std::shared_ptr<const MemberStream> templ;
  std::vector<uint64_t> alloc_bytes;
  // The template's start state with every block that changes size freed
  // (merged with free neighbours): what ran before the trace is carried over,
  // the resized blocks are placed through the policy by their own allocs.
  std::vector<StartSegment> start_state;
};

class PredictedReader final : public EventReader {
 public:
  PredictedReader(std::shared_ptr<const Shared> shared, std::string name)
      : shared_(std::move(shared)), name_(std::move(name)) {}

  absl::StatusOr<bool> Next(Event& e) override {
    const MemberStream& t = *shared_->templ;
    if (next_ >= t.events.size()) return false;
    current_ = next_++;
    e = t.events[current_].event;
    e.addr.reset();  // the template's addresses, of another size
    e.shape.reset();
    const StreamStep& step = t.steps[current_];
    if (e.kind == EventKind::kAlloc) e.bytes = Bytes(shared_->alloc_bytes[step.alloc]);
    return true;
  }
  const TraceMetadata& metadata() const override { return shared_->templ->scenario->recording->metadata(); }
  std::string Location() const override { return fmt::format("{}: event {}", name_, current_); }
  const ContextTable* context_table() const override {
    return shared_->templ->scenario->recording->context_table();
  }
  EventContext context() const override {
    return current_ < shared_->templ->contexts.size() ? shared_->templ->contexts[current_] : EventContext{};
  }

 private:
  std::shared_ptr<const Shared> shared_;
  std::string name_;
  size_t next_ = 0;
  size_t current_ = 0;
};

class PredictedRecording final : public Recording {
 public:
  PredictedRecording(std::shared_ptr<const Shared> shared, std::string name)
      : Recording(name, shared->templ->scenario->recording->format()), shared_(std::move(shared)) {}

  const TraceMetadata& metadata() const override { return base().metadata(); }
  std::optional<std::vector<DeviceEvents>> devices() const override {
    const std::optional<DeviceId> d = shared_->templ->scenario->device;
    if (!d) return std::nullopt;
    return std::vector<DeviceEvents>{{*d, shared_->templ->events.size(), false, "", false}};
  }
  std::vector<StartSegment> StartState(DeviceId) const override { return shared_->start_state; }
  std::optional<StartSummary> StartStateSummary(DeviceId) const override {
    return shared_->templ->scenario->start_summary;
  }
  std::optional<RecordedSettings> settings() const override { return base().settings(); }
  std::optional<RecordedSettings> DeviceSettings(DeviceId d) const override {
    return base().DeviceSettings(d);
  }
  std::optional<RecordedLimit> Limit(DeviceId d) const override {
    if (std::optional<RecordedLimit> stated = base().Limit(d)) return stated;
    const std::optional<OomCapacity>& oom = shared_->templ->scenario->recorded_oom;
    if (!oom) return std::nullopt;
    return RecordedLimit{
        oom->capacity,
        fmt::format("device capacity: reserved + device_free at the OOM {} recorded", shared_->templ->name)};
  }
  const ContextTable* context_table() const override { return base().context_table(); }
  std::string Describe() const override {
    return fmt::format("a prediction from {} ({})", shared_->templ->name, base().Describe());
  }
  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<PredictedReader>(shared_, path());
  }

 private:
  const Recording& base() const { return *shared_->templ->scenario->recording; }
  std::shared_ptr<const Shared> shared_;
};

// The buffer ids of the start-state blocks that do not keep their recorded
// size, ascending.
std::vector<uint64_t> StartBlocksResized(const MemberStream& t, const std::vector<uint64_t>& alloc_bytes) {
  std::vector<uint64_t> resized;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i].event;
    if (e.kind != EventKind::kAlloc || e.tag != kStartStateTag) continue;
    if (alloc_bytes[t.steps[i].alloc] != e.bytes.value()) resized.push_back(e.id);
  }
  std::sort(resized.begin(), resized.end());
  return resized;
}

// `segments` with the blocks of `freed` (ascending ids) made free and merged
// with their free neighbours, as the caching allocator keeps a segment.
std::vector<StartSegment> FreeBlocks(std::vector<StartSegment> segments, const std::vector<uint64_t>& freed) {
  for (StartSegment& seg : segments) {
    std::vector<StartBlock> blocks;
    for (StartBlock b : seg.blocks) {
      if (b.live && std::binary_search(freed.begin(), freed.end(), b.id)) b = {b.address, b.size, Bytes(0)};
      if (!b.live && !blocks.empty() && !blocks.back().live) {
        blocks.back().size += b.size;
        continue;
      }
      blocks.push_back(b);
    }
    seg.blocks = std::move(blocks);
  }
  return segments;
}

}  // namespace

absl::StatusOr<PredictedScenario> MakePredictedScenario(std::shared_ptr<const MemberStream> templ,
                                                        std::vector<uint64_t> alloc_bytes, std::string name,
                                                        bool carry_cache) {
  const std::vector<uint64_t> resized = StartBlocksResized(*templ, alloc_bytes);
  const bool kept = resized.empty();
  const uint64_t blocks = templ->start_allocs;
  const Scenario& base = *templ->scenario;
  std::vector<StartSegment> start = FreeBlocks(base.start_state, resized);
  auto shared =
      std::make_shared<const Shared>(Shared{std::move(templ), std::move(alloc_bytes), std::move(start)});
  ScenarioRequest request;
  request.device = base.device;
  const bool carried = carry_cache && !kept && base.start_mode == StartStateMode::kSeed;
  request.start_state = kept || carried ? base.start_mode : StartStateMode::kPlace;
  absl::StatusOr<Scenario> scenario =
      MakeScenario(std::make_shared<const PredictedRecording>(std::move(shared), std::move(name)), request);
  if (!scenario.ok()) return scenario.status();
  return PredictedScenario{*std::move(scenario), kept, carried, resized.size(), blocks};
}

}  // namespace hbmsim::scale
