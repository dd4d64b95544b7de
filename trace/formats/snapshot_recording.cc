// A PyTorch memory snapshot as a Recording: loaded once, shared by every
// stream. Each device's stream (and its start state, whose block ids are those
// of that stream's `alloc tag=preexisting` events) comes from a reader of that
// device alone.
#include "trace/formats/snapshot_recording.h"

#include "fmt/format.h"
#include "trace/torch/final_state.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {
namespace {

class SnapshotRecording final : public Recording {
 public:
  SnapshotRecording(const std::string& path, std::shared_ptr<const Snapshot> snap)
      : Recording(path, "torch-snapshot"),
        snap_(std::move(snap)),
        starts_(std::make_shared<InitialStateCache>()),
        all_(snap_, DevicesWithTraces(*snap_), starts_) {}

  const TraceMetadata& metadata() const override { return all_.metadata(); }

  std::optional<std::vector<DeviceEvents>> devices() const override {
    std::vector<DeviceEvents> out;
    const std::vector<DeviceId> with = DevicesWithTraces(*snap_);
    for (size_t i = 0; i < with.size(); ++i) {
      out.push_back({with[i], all_.EventCount(i), all_.CapacityAtFirstOom(i).has_value(), "", false});
    }
    return out;
  }
  std::vector<StartSegment> StartState(DeviceId device) const override {
    return One(device).StartSegments(0);
  }
  std::optional<StartSummary> StartStateSummary(DeviceId device) const override {
    return One(device).Start(0);
  }
  std::optional<OomCapacity> RecordedOom(DeviceId device) const override {
    return One(device).CapacityAtFirstOom(0);
  }
  std::optional<RecordedSettings> settings() const override { return all_.settings(); }
  HistoryAddresses FinalHistory(DeviceId device) const override { return One(device).FinalHistory(0); }
  std::optional<RecordedState> FinalState(std::optional<DeviceId> device) const override {
    return SnapshotFinalState(*snap_, device);
  }
  bool state_only() const override { return SnapshotIsStateOnly(*snap_); }
  const ContextTable* context_table() const override { return &snap_->context; }
  bool records_side_entries() const override { return true; }
  std::string Describe() const override {
    return fmt::format("PyTorch snapshot (generation {}{})", snap_->generation,
                       snap_->bare_list ? ", a bare list of segments" : "");
  }

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    if (!device) return std::make_unique<SnapshotEventReader>(snap_, DevicesWithTraces(*snap_), starts_);
    absl::StatusOr<DeviceId> d = ChooseSnapshotDevice(*snap_, device);
    if (!d.ok()) return d.status();
    return std::make_unique<SnapshotEventReader>(snap_, std::vector<DeviceId>{*d}, starts_);
  }

 private:
  SnapshotEventReader One(DeviceId device) const { return SnapshotEventReader(snap_, {device}, starts_); }

  std::shared_ptr<const Snapshot> snap_;
  // Each device's start state, walked once for all the readers above
  // (every trial of `size` and the advice opens one).
  std::shared_ptr<InitialStateCache> starts_;
  SnapshotEventReader all_;  // every device with a trace: counts, settings, metadata
};

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenSnapshotTreeRecording(const std::string& name,
                                                                    const PickleTree& tree) {
  absl::StatusOr<Snapshot> snap = ParseSnapshot(tree);
  if (!snap.ok()) return absl::InvalidArgumentError(snap.status().message());
  return std::unique_ptr<Recording>(
      new SnapshotRecording(name, std::make_shared<const Snapshot>(*std::move(snap))));
}

absl::StatusOr<std::unique_ptr<Recording>> OpenSnapshotRecording(const std::string& path) {
  absl::StatusOr<Snapshot> snap = LoadSnapshotFile(path);
  if (!snap.ok()) return absl::InvalidArgumentError(snap.status().message());
  return std::unique_ptr<Recording>(
      new SnapshotRecording(path, std::make_shared<const Snapshot>(*std::move(snap))));
}

}  // namespace hbmsim
