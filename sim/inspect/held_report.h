// What `hbmsim inspect` and `hbmsim replay` say about a held state (a JAX
// device memory profile, trace/core/held_state.h): per device, where the
// memory is by the user's Python frame and by kind (buffer / executable),
// the totals, with a limit the headroom, and each --probe's answer
// (held_probe.h); then what is held on no device (executables). Bytes are
// exact, TensorFlow's HumanReadableNumBytes beside them. Text and JSON.
//
//   headroom = limit - Σ buffer bytes of the device (negative: over the limit)
#ifndef HBMSIM_SIM_INSPECT_HELD_REPORT_H_
#define HBMSIM_SIM_INSPECT_HELD_REPORT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sim/inspect/held_probe.h"
#include "sim/layer.h"
#include "trace/formats/recording.h"

namespace hbmsim::sim::inspect {

// Holdings grouped under one key (a kind, or a frame).
struct HeldGroup {
  std::string key;     // "buffer"; "train.py:42 in loss_fn"
  std::string detail;  // a frame's full path "/home/me/train.py:42 in loss_fn"; "" for a kind
  uint64_t count = 0;
  Bytes bytes;                // Σ of the entries of known size
  uint64_t unknown_size = 0;  // things recorded without a size (negative bytes)
};

struct HeldDeviceReport {
  DeviceId device;
  std::string name;
  uint64_t buffers = 0;
  Bytes buffer_bytes;
  std::vector<HeldGroup> kinds;   // largest first (key on ties)
  std::vector<HeldGroup> frames;  // the device's holdings by frame, largest first
  std::vector<HeldProbe> probes;
};

struct HeldReport {
  std::string file;
  std::string source;
  std::vector<HeldDeviceReport> devices;
  std::vector<HeldGroup> unplaced_kinds;
  std::vector<HeldGroup> unplaced_frames;
  std::optional<Bytes> limit;
  std::string limit_source;           // "--bytes-limit"
  std::string policy;                 // the probes' policy, "" without probes
  std::vector<std::string> warnings;  // the recording's
};

struct HeldOptions {
  std::optional<DeviceId> device;  // nullopt: every device
  std::string device_name;         // or the recording's name for one ("cuda:0")
  std::optional<Bytes> limit;
  std::vector<Bytes> probes;  // need a limit
  std::string allocator;      // "" : the recording's own
};

// Frames listed per device in the text (the JSON has them all).
inline constexpr size_t kTextFrames = 15;

// Errors: --device naming no device of the recording, --probe without a
// limit, the policy's (bad --allocator), all InvalidArgument.
absl::StatusOr<HeldReport> MakeHeldReport(std::shared_ptr<const Recording> recording,
                                          const HeldOptions& options);
bool AnyHeldProbeFailed(const HeldReport& r);

std::string RenderHeldText(const HeldReport& r);
nlohmann::ordered_json RenderHeldJson(const HeldReport& r);
// RenderHeldJson as text, indented; bytes of the profile's strings that are
// not UTF-8 are replaced (a stack's file names are whatever the job had).
std::string HeldJsonText(const HeldReport& r);

}  // namespace hbmsim::sim::inspect

#endif  // HBMSIM_SIM_INSPECT_HELD_REPORT_H_
