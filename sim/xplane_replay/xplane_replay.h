// Replaying a TF/JAX profile (`hbmsim replay run.xplane.pb` or a
// memory_profile.json.gz): the pieces the replay command needs besides the
// engine, as sim/torch_replay does for PyTorch snapshots.
//
//   Open        read the profile, pick the device: --device takes an index or
//               an allocator name (GPU_0_bfc); default device 0, the busiest
//               GPU allocator
//   Configure   bfc: the options of the framework that recorded it, before
//               --set (so --set wins); allow_growth as the start state found
//               it when the fragmentation readings tell the pool's size:
//                 GPU allocator, TensorFlow  allow_growth=false garbage_collection=true
//                                            region_coalescing=true (the VMM sub-allocator)
//                 GPU allocator, JAX/XLA     allow_growth=false garbage_collection=false
//                                            region_coalescing=false (DeviceMemAllocator)
//                 a host allocator (…host…)  allow_growth=true garbage_collection=false
//                                            region_coalescing=false
//   limit       the device's bytes_allocated + bytes_available + bytes_reserved
//   Prepare     under --check-recorded: the RecordedChecker around the policy
//   sections    the report's profile section (text) and `xplane` (JSON)
#ifndef HBMSIM_SIM_XPLANE_REPLAY_XPLANE_REPLAY_H_
#define HBMSIM_SIM_XPLANE_REPLAY_XPLANE_REPLAY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/xplane_replay/recorded_checker.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim {

class XplaneReplay {
 public:
  // nullptr when `path` is not a profile. `device` is the --device text ("" = default).
  static absl::StatusOr<std::unique_ptr<XplaneReplay>> OpenIfProfile(const std::string& path,
                                                                     const std::string& device);

  uint32_t device() const { return device_; }
  const std::string& device_name() const { return trace().devices[device_].recording.name; }
  EventReader& reader() { return *reader_; }
  const xplane::ProfileTrace& trace() const { return reader_->trace(); }
  std::optional<Bytes> limit() const;

  void Configure(AllocatorConfig& config);
  absl::StatusOr<Allocator*> Prepare(Allocator& built, bool check_recorded);

  std::string TextSection() const;
  nlohmann::ordered_json JsonSection() const;

 private:
  std::unique_ptr<xplane::ProfileEventReader> reader_;
  uint32_t device_ = 0;
  std::vector<std::string> applied_;
  std::unique_ptr<RecordedChecker> checker_;
};

}  // namespace hbmsim

#endif  // HBMSIM_SIM_XPLANE_REPLAY_XPLANE_REPLAY_H_
