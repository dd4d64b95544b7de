// Replaying a PyTorch memory snapshot (`hbmsim replay SNAP.pickle`): the
// pieces the replay command needs besides the engine.
//
//   Open         load the pickle, choose the device (--device, else the first
//                with a trace; none: an error naming the devices that have one)
//   Configure    the snapshot's allocator_settings as the policy's defaults
//   Capacity     `auto`: reserved at the recorded OOM + its device_free
//   Prepare      torch: seed the rebuilt initial state, wrap the policy
//                (SeededTorch) and watch the replay (SnapshotChecker)
//   Finish       recorded_check into the summary; the report's own section
//
// With another policy the snapshot is just a trace: its preexisting blocks
// are allocated by that policy like any other alloc.
#ifndef HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_REPLAY_H_
#define HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_REPLAY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/torch_replay/seeded_torch.h"
#include "sim/torch_replay/snapshot_checker.h"
#include "sim/torch_replay/snapshot_settings.h"
#include "trace/torch/snapshot_events.h"

namespace hbmsim {

class SnapshotReplay {
 public:
  static absl::StatusOr<std::unique_ptr<SnapshotReplay>> Open(const std::string& path,
                                                              std::optional<DeviceId> device);

  DeviceId device() const { return device_; }
  EventReader& reader() { return *reader_; }
  const std::optional<OomCapacity>& oom_capacity() const { return oom_capacity_; }

  // "key=value" per option Configure took from the snapshot.
  const std::vector<std::string>& applied_settings() const { return applied_settings_; }
  // Call before --set is applied (see ApplySnapshotSettings).
  void Configure(AllocatorConfig& config) {
    applied_settings_ = ApplySnapshotSettings(reader_->settings(), device_, config);
  }
  // The allocator the engine must drive: `built` itself, or the seeded torch
  // adapter. Errors: an initial state the policy rejects.
  absl::StatusOr<Allocator*> Prepare(Allocator& built);
  // The observer to add to the engine (after Prepare).
  ReplayObserver* observer() { return checker_.get(); }
  // The recorded_check of cli-contract.md, from the checker (gen1 history
  // addresses compared against the final state first).
  void Finish(ReplaySummary& summary);

  // The report's snapshot section (text) and the JSON object `torch_snapshot`.
  std::string TextSection(bool check_recorded) const;
  nlohmann::ordered_json JsonSection() const;

 private:
  std::unique_ptr<SnapshotEventReader> reader_;
  DeviceId device_;
  std::optional<OomCapacity> oom_capacity_;
  std::vector<std::string> applied_settings_;
  torch::TorchAllocator* torch_ = nullptr;
  const Allocator* driven_ = nullptr;  // what the engine drives (Prepare's answer)
  std::unique_ptr<SeededTorch> seeded_;
  std::unique_ptr<SnapshotChecker> checker_;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_TORCH_REPLAY_SNAPSHOT_REPLAY_H_
