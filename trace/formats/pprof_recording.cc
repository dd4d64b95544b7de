// A JAX device memory profile (trace/pprof) as a Recording: a held state
// (facts().held_state) whose events are its buffers as allocations, one device per
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

namespace hbmsim::trace {
namespace {

std::vector<DeviceEvents> HeldDevices(const HeldState& held) {
  std::vector<DeviceEvents> out;
  for (const HeldDevice& d : held.devices) {
    uint64_t events = 0;
    for (const HeldEntry& e : d.entries) events += pprof::PlacedAsEvents(e) ? e.count : 0;
    out.push_back({d.device, events, false, d.name, false});
  }
  return out;
}

// The allocator JAX runs on these devices, and what the events leave out.
TraceMetadata DescribeInMetadata(const HeldState& held) {
  TraceMetadata metadata;
  bool all_tpu = !held.devices.empty(), any_cpu = false;
  for (const HeldDevice& d : held.devices) {
    all_tpu = all_tpu && d.name.starts_with("TPU");
    any_cpu = any_cpu || d.name.find("CPU") != std::string::npos || d.name.starts_with("cpu");
  }
  metadata.entries.emplace_back("allocator", all_tpu ? "tpu" : "bfc");
  if (any_cpu) {
    metadata.entries.emplace_back(
        "warning",
        "a CPU device: JAX's CPU client allocates with the host's malloc, not a BFC pool; bfc is assumed");
  }
  std::map<std::string, std::pair<uint64_t, int64_t>> unplaced;  // kind -> (count, bytes)
  auto add = [&](const HeldEntry& e) {
    auto& [count, bytes] = unplaced[e.kind];
    count += e.count;
    bytes += e.bytes;
  };
  for (const HeldEntry& e : held.unplaced) add(e);
  for (const HeldDevice& d : held.devices) {
    for (const HeldEntry& e : d.entries) {
      if (!pprof::PlacedAsEvents(e)) add(e);
    }
  }
  for (const auto& [kind, figures] : unplaced) {
    metadata.entries.emplace_back(
        "warning",
        fmt::format("{} held of kind {} ({} B as recorded) are not allocations of any device here: the "
                    "profile gives them no device or no size",
                    figures.first, kind, figures.second));
  }
  return metadata;
}

RecordedFacts HeldFacts(const std::shared_ptr<const HeldState>& held) {
  RecordedFacts f;
  f.metadata = DescribeInMetadata(*held);
  f.description = held->source;
  f.devices = HeldDevices(*held);
  f.held_state = held;
  DeviceFacts any;
  any.settings = RecordedSettings{};
  any.settings->framework = Framework::kJax;
  f.other_devices = std::move(any);
  return f;
}

class DeviceProfileRecording final : public Recording {
 public:
  DeviceProfileRecording(const std::string& path, std::shared_ptr<const HeldState> held)
      : Recording(path, TraceFormat::kJaxDeviceProfile, HeldFacts(held)), held_(std::move(held)) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId> device) const override {
    return pprof::MakeHeldEventReader(*held_, facts().metadata, device, path());
  }

 private:
  std::shared_ptr<const HeldState> held_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenDeviceProfileRecording(const std::string& path) {
  absl::StatusOr<HeldState> held = pprof::ReadDeviceProfileFile(path);
  if (!held.ok()) return absl::InvalidArgumentError(held.status().message());
  return std::unique_ptr<Recording>(
      std::make_unique<DeviceProfileRecording>(path, std::make_shared<const HeldState>(*std::move(held))));
}

}  // namespace hbmsim::trace
