#include "sim/scale/predicted_recording.h"

#include <algorithm>

#include "fmt/format.h"

namespace hbmsim::sim::scale {
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
  const TraceMetadata& metadata() const override {
    return shared_->templ->scenario->recording->facts().metadata;
  }
  std::string Location() const override { return fmt::format("{}: event {}", name_, current_); }
  const ContextTable* context_table() const override {
    return shared_->templ->scenario->recording->facts().context_table.get();
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

// What a prediction says besides its events: the template's metadata,
// settings, limit and stacks; its own device, start state and description.
// No recorded OOM, final state or side entries: those were of the template's
// sizes.
RecordedFacts PredictedFacts(const std::shared_ptr<const Shared>& shared) {
  const MemberStream& templ = *shared->templ;
  const RecordedFacts& base = templ.scenario->recording->facts();
  RecordedFacts f;
  f.metadata = base.metadata;
  f.description = fmt::format("a prediction from {} ({})", templ.name, base.description);
  if (const std::optional<DeviceId> d = templ.scenario->device) {
    f.devices = std::vector<DeviceEvents>{{*d, templ.events.size(), false, "", false}};
  }
  f.context_table = base.context_table;
  // Every device's facts are the prediction's: its start state whatever the device.
  const auto predicted = [shared](const DeviceFacts& from) {
    DeviceFacts out;
    out.settings = from.settings;
    out.limit = from.limit;
    const std::optional<OomCapacity>& oom = shared->templ->scenario->recorded_oom;
    if (!out.limit && oom) {
      out.limit = RecordedLimit{
          oom->capacity,
          fmt::format("device capacity: reserved + device_free at the OOM {} recorded", shared->templ->name)};
    }
    out.start_state = shared->start_state;
    out.start_summary = shared->templ->scenario->start_summary;
    return out;
  };
  for (const auto& [d, facts] : base.by_device) f.by_device.emplace(d, facts.Then(predicted));
  f.other_devices = base.other_devices.Then(predicted);
  return f;
}

class PredictedRecording final : public Recording {
 public:
  PredictedRecording(std::shared_ptr<const Shared> shared, std::string name)
      : Recording(name, shared->templ->scenario->recording->format(), PredictedFacts(shared)),
        shared_(std::move(shared)) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<PredictedReader>(shared_, path());
  }

 private:
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

}  // namespace hbmsim::sim::scale
