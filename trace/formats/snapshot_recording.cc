// A PyTorch memory snapshot as a Recording: loaded once, shared by every
// stream. Each device's stream (and its start state, whose block ids are those
// of that stream's `alloc tag=preexisting` events) comes from a reader of that
// device alone; its facts are made from such a reader when first asked for.
#include "trace/formats/snapshot_recording.h"

#include "fmt/format.h"
#include "trace/torch/final_state.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim::trace {
namespace {

// One device's facts, from a reader of that device alone (its ids count from 1).
DeviceFacts SnapshotDeviceFacts(const std::shared_ptr<const Snapshot>& snap, DeviceId device,
                                const std::optional<RecordedSettings>& settings,
                                const std::shared_ptr<InitialStateCache>& starts) {
  auto one = std::make_shared<const SnapshotEventReader>(snap, std::vector<DeviceId>{device}, starts);
  DeviceFacts f;
  f.settings = settings;
  f.start_state = one->StartSegments(0);
  f.start_summary = one->Start(0);
  f.recorded_oom = one->CapacityAtFirstOom(0);
  f.final_history = Lazy<HistoryAddresses>::Of([one] { return one->FinalHistory(0); });
  return f;
}

RecordedFacts SnapshotFacts(const std::shared_ptr<const Snapshot>& snap,
                            const std::shared_ptr<InitialStateCache>& starts) {
  const std::vector<DeviceId> traced = DevicesWithTraces(*snap);
  const SnapshotEventReader all(snap, traced, starts);  // every device with a trace: counts, settings, metadata
  RecordedFacts f;
  f.metadata = all.metadata();
  f.description = fmt::format("PyTorch snapshot (generation {}{})", snap->generation,
                              snap->bare_list ? ", a bare list of segments" : "");
  std::vector<DeviceEvents> devices;
  for (size_t i = 0; i < traced.size(); ++i) {
    devices.push_back({traced[i], all.EventCount(i), all.CapacityAtFirstOom(i).has_value(), "", false});
  }
  f.devices = std::move(devices);
  f.records_side_entries = true;
  f.state_only = SnapshotIsStateOnly(*snap);
  f.context_table = std::shared_ptr<const ContextTable>(snap, &snap->context);
  f.final_state = Lazy<RecordedStates>::Of([snap] { return SnapshotFinalStates(*snap); });
  const std::optional<RecordedSettings> settings = all.settings();
  for (const DeviceId d : traced) {
    f.by_device.emplace(
        d, Lazy<DeviceFacts>::Of([snap, d, settings, starts] { return SnapshotDeviceFacts(snap, d, settings, starts); }));
  }
  DeviceFacts other;
  other.settings = settings;
  f.other_devices = std::move(other);
  return f;
}

class SnapshotRecording final : public Recording {
 public:
  SnapshotRecording(const std::string& path, std::shared_ptr<const Snapshot> snap)
      : SnapshotRecording(path, std::move(snap), std::make_shared<InitialStateCache>()) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    if (!device) return std::make_unique<SnapshotEventReader>(snap_, DevicesWithTraces(*snap_), starts_);
    absl::StatusOr<DeviceId> d = ChooseSnapshotDevice(*snap_, device);
    if (!d.ok()) return d.status();
    return std::make_unique<SnapshotEventReader>(snap_, std::vector<DeviceId>{*d}, starts_);
  }

 private:
  // The facts' readers and every reader of Events share one walk per device.
  SnapshotRecording(const std::string& path, std::shared_ptr<const Snapshot> snap,
                    std::shared_ptr<InitialStateCache> starts)
      : Recording(path, TraceFormat::kTorchSnapshot, SnapshotFacts(snap, starts)),
        snap_(std::move(snap)),
        starts_(std::move(starts)) {}

  std::shared_ptr<const Snapshot> snap_;
  // Each device's start state, walked once for all the readers above
  // (every trial of `size` and the advice opens one).
  std::shared_ptr<InitialStateCache> starts_;
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

}  // namespace hbmsim::trace
