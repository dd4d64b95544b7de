// XLA's memory artifacts as a Recording: the program's events are read whole
// once and each stream serves a copy of them (a compiled program is small).
#include <map>

#include "trace/formats/snapshot_recording.h"
#include "trace/xla/heap_trace_proto.h"
#include "trace/xla/text_pair.h"

namespace hbmsim {
namespace {

class XlaRecording final : public Recording {
 public:
  XlaRecording(const std::string& path, std::string_view format, xla::XlaTrace trace)
      : Recording(path, format), trace_(std::move(trace)) {}

  const TraceMetadata& metadata() const override { return trace_.metadata; }
  // The program was packed by XLA's own heap simulator: a policy that can pack
  // by XLA's rules (offline's rules=xla) takes them from here.
  std::optional<RecordedSettings> settings() const override {
    RecordedSettings s;
    s.framework = "xla";
    return s;
  }
  std::optional<std::vector<DeviceEvents>> devices() const override {
    std::map<uint64_t, uint64_t> counts;  // ordered: the list is ascending
    for (const OwnedEvent& e : trace_.events) ++counts[e.event.device.value()];
    std::vector<DeviceEvents> out;
    for (const auto& [d, n] : counts) out.push_back({DeviceId(d), n, false, "", false});
    return out;
  }
  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<xla::XlaEventReader>(trace_);
  }

 private:
  const xla::XlaTrace trace_;
};

absl::StatusOr<std::unique_ptr<Recording>> Wrap(const std::string& path, std::string_view format,
                                                absl::StatusOr<xla::XlaTrace> t) {
  if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
  return std::unique_ptr<Recording>(new XlaRecording(path, format, *std::move(t)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenXlaTextRecording(const std::string& path) {
  return Wrap(path, "xla-text", xla::ReadTextPairFiles(path));
}

absl::StatusOr<std::unique_ptr<Recording>> OpenXlaProtoRecording(const std::string& path) {
  return Wrap(path, "xla-proto", xla::ReadHeapSimulatorProtoFile(path));
}

}  // namespace hbmsim
