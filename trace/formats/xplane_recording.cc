// TF/JAX profiles (an XSpace `*.xplane.pb` or XProf's memory_profile.json(.gz))
// as a Recording: each BFC allocator of the profile is a device, its events
// opening with the inferred start state (trace/xplane/profile_trace.h). The
// profile is read whole once; each stream serves a copy (a profile holds a
// few thousand records).
#include <map>

#include "trace/formats/snapshot_recording.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim {
namespace {

class ProfileRecording final : public Recording {
 public:
  ProfileRecording(const std::string& path, std::string_view format, xplane::ProfileTrace trace)
      : Recording(path, format), trace_(std::move(trace)) {}

  const TraceMetadata& metadata() const override { return trace_.metadata; }
  std::optional<std::vector<DeviceEvents>> devices() const override {
    std::map<uint64_t, uint64_t> counts;  // ordered: the list is ascending
    for (const OwnedEvent& e : trace_.events) ++counts[e.event.device.value()];
    std::vector<DeviceEvents> out;
    for (const auto& [d, n] : counts) out.push_back({DeviceId(d), n, false});
    return out;
  }
  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<xplane::ProfileEventReader>(trace_);
  }
  std::string Describe() const override {
    return trace_.framework.empty() ? trace_.form : trace_.form + ", " + trace_.framework;
  }

 private:
  const xplane::ProfileTrace trace_;
};

absl::StatusOr<std::unique_ptr<Recording>> Open(const std::string& path, std::string_view format) {
  absl::StatusOr<xplane::ProfileTrace> t = xplane::ReadProfileTraceFile(path);
  if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
  return std::unique_ptr<Recording>(new ProfileRecording(path, format, *std::move(t)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenXplaneRecording(const std::string& path) {
  return Open(path, "xplane");
}

absl::StatusOr<std::unique_ptr<Recording>> OpenMemoryProfileRecording(const std::string& path) {
  return Open(path, "memory-profile");
}

}  // namespace hbmsim
