#include "sim/scenario/scenario.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/scenario/scenario_config.h"
#include "trace/core/numbers.h"
#include "trace/formats/format_table.h"

namespace hbmsim::sim {
namespace {

// "0, 1", or "0 (GPU_0_bfc), 1 (xla_gpu_host_bfc)" when the recording names them.
std::string DeviceList(const std::vector<DeviceEvents>& devices) {
  if (devices.empty()) return "none";
  std::string out;
  for (const DeviceEvents& d : devices) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ", d.device.value());
    if (!d.name.empty()) out += fmt::format(" ({})", d.name);
  }
  return out;
}

// --device NAME: the listed device the recording calls NAME.
absl::StatusOr<DeviceId> FindNamed(const Recording& r,
                                   const std::optional<std::vector<DeviceEvents>>& devices,
                                   const std::string& name) {
  for (const DeviceEvents& d : devices.value_or(std::vector<DeviceEvents>{})) {
    if (d.name == name) return d.device;
  }
  if (!devices) {
    return absl::InvalidArgumentError(
        fmt::format("--device {}: expected a device number ({} does not name its devices)", name, r.path()));
  }
  return absl::InvalidArgumentError(
      fmt::format("--device {}: {} has no device of that name (devices: {})", name, r.path(), DeviceList(*devices)));
}

}  // namespace

absl::StatusOr<std::pair<DeviceId, std::string>> ChooseDevice(const Recording& r,
                                                              const std::vector<DeviceEvents>& devices,
                                                              std::optional<DeviceId> wanted) {
  if (wanted) {
    for (const DeviceEvents& d : devices) {
      if (d.device == *wanted) return std::pair{*wanted, std::string("--device")};
    }
  }
  if (!wanted && devices.empty() && r.facts().state_only) {
    // size, advise, compare and sweep ask about a sequence of requests; this file has none.
    return absl::InvalidArgumentError(fmt::format(
        "{}: an allocator state with no trace (a snapshot taken without _record_memory_history), so no "
        "request to size or compare; `hbmsim inspect {}` analyses the state (so does `hbmsim replay`)",
        r.path(), r.path()));
  }
  if (wanted || devices.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no trace for device {} (devices with traces: {})",
                                                  r.path(), wanted.value_or(DeviceId(0)).value(),
                                                  DeviceList(devices)));
  }
  for (const DeviceEvents& d : devices) {
    if (d.recorded_oom) return std::pair{d.device, std::string("it holds the recorded OOM")};
  }
  const DeviceEvents* most = &devices.front();
  for (const DeviceEvents& d : devices) {
    if (std::pair(!d.host_memory, d.events) > std::pair(!most->host_memory, most->events)) most = &d;
  }
  return std::pair{most->device, devices.size() == 1 ? std::string("the only device with events")
                                                     : std::string("it has the most events")};
}

std::string_view StartStateModeName(StartStateMode m) {
  return m == StartStateMode::kSeed ? "seed" : "place";
}

absl::StatusOr<StartStateMode> ParseStartStateMode(std::string_view text) {
  if (text == "seed") return StartStateMode::kSeed;
  if (text == "place") return StartStateMode::kPlace;
  return absl::InvalidArgumentError(fmt::format("--start-state {}: expected seed or place", text));
}

namespace {

// A sign or digits first: a device number, never a recording's device name.
bool LooksLikeNumber(std::string_view text) {
  return !text.empty() && (text[0] == '-' || text[0] == '+' || (text[0] >= '0' && text[0] <= '9'));
}

}  // namespace

absl::StatusOr<ScenarioRequest> ParseScenarioRequest(std::string_view device, std::string_view start_state) {
  ScenarioRequest request;
  if (!device.empty()) {
    // Not a number: the recording's name for a device (MakeScenario looks it up).
    absl::StatusOr<uint64_t> d = ParseU64(device);
    if (d.ok()) {
      request.device = DeviceId(*d);
    } else if (LooksLikeNumber(device)) {  // -1, +3, 2**70: meant as a number, and none is a name
      return absl::InvalidArgumentError(
          fmt::format("--device {}: {}", device, std::string(d.status().message())));
    } else {
      request.device_name = std::string(device);
    }
  }
  absl::StatusOr<StartStateMode> mode = ParseStartStateMode(start_state);
  if (!mode.ok()) return mode.status();
  request.start_state = *mode;
  return request;
}

std::optional<DeviceId> Scenario::OtherDeviceWithOom() const {
  for (const DeviceEvents& d : devices) {
    if (d.recorded_oom && d.device != device) return d.device;
  }
  return std::nullopt;
}

std::string Scenario::DeviceText() const {
  if (!device) return "the device of the first event (the format lists no devices up front)";
  std::string out = fmt::format("{} ({})", device->value(), device_reason);
  std::string others;
  for (const DeviceEvents& d : devices) {
    if (d.device == *device) {
      if (!d.name.empty()) out = fmt::format("{} = {} ({})", device->value(), d.name, device_reason);
      continue;
    }
    others +=
        fmt::format("{}device {}{} ({} events{})", others.empty() ? "" : ", ", d.device.value(),
                    d.name.empty() ? "" : " " + d.name, d.events, d.recorded_oom ? ", recorded OOM" : "");
  }
  if (!others.empty()) out += fmt::format("; others: {}", others);
  return out;
}

absl::StatusOr<std::optional<DeviceId>> HeaderDevice(const Recording& recording) {
  const std::string* text = recording.facts().metadata.Find(kDeviceKey);
  if (text == nullptr) return std::optional<DeviceId>();
  absl::StatusOr<uint64_t> n = ParseU64(*text);
  if (!n.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: metadata {}: {}", recording.path(), kDeviceKey, std::string(n.status().message())));
  }
  return std::optional<DeviceId>(DeviceId(*n));
}

absl::StatusOr<Scenario> MakeScenario(std::shared_ptr<const Recording> recording,
                                      const ScenarioRequest& request) {
  Scenario s;
  s.start_mode = request.start_state;
  if (const std::string* n = recording->facts().metadata.Find("start_events")) {
    absl::StatusOr<uint64_t> count = ParseU64(*n);
    if (!count.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: metadata start_events: {}", recording->path(), std::string(count.status().message())));
    }
    s.start_events = *count;
  }
  if (absl::Status st = CheckHeaderSettings(*recording); !st.ok()) return st;
  std::optional<std::vector<DeviceEvents>> listed = recording->facts().devices;
  std::optional<DeviceId> wanted = request.device;
  if (!request.device_name.empty()) {
    absl::StatusOr<DeviceId> named = FindNamed(*recording, listed, request.device_name);
    if (!named.ok()) return named.status();
    wanted = *named;
  }
  if (listed) {
    absl::StatusOr<std::pair<DeviceId, std::string>> chosen = ChooseDevice(*recording, *listed, wanted);
    if (!chosen.ok()) return chosen.status();
    s.devices = *std::move(listed);
    s.device = chosen->first;
    s.device_reason = chosen->second;
  } else if (wanted) {
    s.device = wanted;
    s.device_reason = "--device";
  } else {
    absl::StatusOr<std::optional<DeviceId>> named = HeaderDevice(*recording);
    if (!named.ok()) return named.status();
    if (*named) {
      s.device = *named;
      s.device_reason = fmt::format("the trace's # {}", kDeviceKey);
    }
  }
  if (s.device) {
    s.start_state = recording->facts().device(*s.device).start_state;
    s.start_summary = recording->facts().device(*s.device).start_summary;
    s.recorded_oom = recording->facts().device(*s.device).recorded_oom;
    s.recorded_limit = recording->facts().device(*s.device).limit;
  }
  s.recording = std::move(recording);
  return s;
}

absl::StatusOr<Scenario> OpenScenario(const std::string& path, const ScenarioRequest& request) {
  absl::StatusOr<std::unique_ptr<Recording>> r = OpenRecording(path);
  if (!r.ok()) return r.status();
  return MakeScenario(std::shared_ptr<const Recording>(*std::move(r)), request);
}

absl::Status CheckReplayedSomething(const Scenario& scenario, const ReplaySummary& summary,
                                    const std::string& name) {
  if (summary.events_replayed > 0 || !scenario.start_state.empty()) return absl::OkStatus();
  if (summary.events_read == 0) return absl::InvalidArgumentError(fmt::format("no events in {}", name));
  std::string devices;
  for (const DeviceId d : summary.other_devices) devices += fmt::format("{}{}", devices.empty() ? "" : ", ", d.value());
  if (summary.other_devices.size() == ReplaySummary::kMaxListedDevices) devices += ", ...";
  const uint64_t device = summary.device ? summary.device->value() : 0;
  return absl::InvalidArgumentError(fmt::format("--device {}: no event of {} is on device {}; devices with events: {}",
                                                device, name, device, devices));
}

}  // namespace hbmsim::sim
