// XLA's memory artifacts as a Recording: the program's events are read whole
// once and each stream serves a copy of them (a compiled program is small).
#include <map>

#include "trace/formats/snapshot_recording.h"
#include "trace/xla/heap_trace_proto.h"
#include "trace/xla/text_pair.h"

namespace hbmsim::trace {
namespace {

RecordedFacts XlaFacts(const xla::XlaTrace& trace) {
  RecordedFacts f;
  f.metadata = trace.metadata;
  std::map<uint64_t, uint64_t> counts;  // ordered: the list is ascending
  for (const OwnedEvent& e : trace.events) ++counts[e.event.device.value()];
  std::vector<DeviceEvents> devices;
  for (const auto& [d, n] : counts) devices.push_back({DeviceId(d), n, false, "", false});
  f.devices = std::move(devices);
  // The program was packed by XLA's own heap simulator: a policy that can pack
  // by XLA's rules (offline's rules=xla) takes them from here.
  DeviceFacts any;
  any.settings = RecordedSettings{};
  any.settings->framework = Framework::kXla;
  f.other_devices = std::move(any);
  return f;
}

class XlaRecording final : public Recording {
 public:
  XlaRecording(const std::string& path, TraceFormat format, xla::XlaTrace trace)
      : Recording(path, format, XlaFacts(trace)), trace_(std::move(trace)) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<xla::XlaEventReader>(trace_);
  }

 private:
  const xla::XlaTrace trace_;
};

absl::StatusOr<std::unique_ptr<Recording>> Wrap(const std::string& path, TraceFormat format,
                                                absl::StatusOr<xla::XlaTrace> t) {
  if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
  return std::unique_ptr<Recording>(new XlaRecording(path, format, *std::move(t)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenXlaTextRecording(const std::string& path) {
  return Wrap(path, TraceFormat::kXlaText, xla::ReadTextPairFiles(path));
}

absl::StatusOr<std::unique_ptr<Recording>> OpenXlaProtoRecording(const std::string& path) {
  return Wrap(path, TraceFormat::kXlaProto, xla::ReadHeapSimulatorProtoFile(path));
}

}  // namespace hbmsim::trace
