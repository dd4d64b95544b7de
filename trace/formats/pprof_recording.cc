// A JAX device memory profile (trace/pprof) as a Recording: a held state
// (held_state()) whose events are its buffers as allocations, one device per
// device label. What the recording tells besides:
//
//   allocator   `tpu` when every device is a TPU, else `bfc` (JAX's GPU
//               allocator; a CPU device gets it too, with a warning, since
//               JAX's CPU client allocates with the host's malloc)
//   warning     what is held but not in the events: executables (no device,
//               and on TPU no size) and entries of unknown size
//   devices     named by label (`cuda:0`, `TPU_3(process=0,(1,0,0,1))`)
//   settings    framework `jax`, pool not grown: JAX preallocates its BFC pool
//               by default (XLA_PYTHON_CLIENT_PREALLOCATE=true), and the
//               profile cannot tell otherwise
#include <map>

#include "fmt/format.h"
#include "trace/formats/snapshot_recording.h"
#include "trace/pprof/device_profile.h"
#include "trace/pprof/held_events.h"

namespace hbmsim {
namespace {

class DeviceProfileRecording final : public Recording {
 public:
  DeviceProfileRecording(const std::string& path, HeldState held)
      : Recording(path, "jax-device-profile"), held_(std::move(held)) {
    DescribeInMetadata();
  }

  const TraceMetadata& metadata() const override { return metadata_; }
  std::optional<std::vector<DeviceEvents>> devices() const override {
    std::vector<DeviceEvents> out;
    for (const HeldDevice& d : held_.devices) {
      uint64_t events = 0;
      for (const HeldEntry& e : d.entries) events += pprof::PlacedAsEvents(e) ? e.count : 0;
      out.push_back({d.device, events, false, d.name, false});
    }
    return out;
  }
  const HeldState* held_state() const override { return &held_; }
  std::optional<RecordedSettings> settings() const override {
    RecordedSettings s;
    s.framework = "jax";
    return s;
  }
  std::string Describe() const override { return held_.source; }
  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    return pprof::MakeHeldEventReader(held_, metadata_, device, path());
  }

 private:
  void DescribeInMetadata();

  const HeldState held_;
  TraceMetadata metadata_;
};

void DeviceProfileRecording::DescribeInMetadata() {
  bool all_tpu = !held_.devices.empty(), any_cpu = false;
  for (const HeldDevice& d : held_.devices) {
    all_tpu = all_tpu && d.name.starts_with("TPU");
    any_cpu = any_cpu || d.name.find("CPU") != std::string::npos || d.name.starts_with("cpu");
  }
  metadata_.entries.emplace_back("allocator", all_tpu ? "tpu" : "bfc");
  if (any_cpu) {
    metadata_.entries.emplace_back(
        "warning",
        "a CPU device: JAX's CPU client allocates with the host's malloc, not a BFC pool; bfc is assumed");
  }
  std::map<std::string, std::pair<uint64_t, int64_t>> unplaced;  // kind -> (count, bytes)
  auto add = [&](const HeldEntry& e) {
    auto& [count, bytes] = unplaced[e.kind];
    count += e.count;
    bytes += e.bytes;
  };
  for (const HeldEntry& e : held_.unplaced) add(e);
  for (const HeldDevice& d : held_.devices) {
    for (const HeldEntry& e : d.entries) {
      if (!pprof::PlacedAsEvents(e)) add(e);
    }
  }
  for (const auto& [kind, figures] : unplaced) {
    metadata_.entries.emplace_back(
        "warning",
        fmt::format("{} held of kind {} ({} B as recorded) are not allocations of any device here: the "
                    "profile gives them no device or no size",
                    figures.first, kind, figures.second));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenDeviceProfileRecording(const std::string& path) {
  absl::StatusOr<HeldState> held = pprof::ReadDeviceProfileFile(path);
  if (!held.ok()) return absl::InvalidArgumentError(held.status().message());
  return std::unique_ptr<Recording>(std::make_unique<DeviceProfileRecording>(path, *std::move(held)));
}

}  // namespace hbmsim
