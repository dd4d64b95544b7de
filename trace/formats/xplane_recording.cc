// TF/JAX profiles (an XSpace `*.xplane.pb` or XProf's memory_profile.json(.gz))
// as a Recording: each BFC allocator of the profile is a device, its events
// opening with the inferred start state (trace/xplane/profile_trace.h). The
// profile is read whole once; each stream serves a copy (a profile holds a
// few thousand records). What the recording tells besides the events:
//
//   devices      named by allocator (GPU_0_bfc); pinned-host allocators marked
//   limit        bytes_allocated + bytes_available + bytes_reserved (start_state.h)
//   settings     the framework, host memory or not, and whether the pool was
//                grown on demand (the fragmentation readings): the policy's
//                row maps them to its options
//   start        the inferred start state's totals, its peak and its notes
//   figures      every record's own figures, for --check-recorded
#include <algorithm>
#include <map>

#include "fmt/format.h"
#include "trace/formats/snapshot_recording.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim::trace {
namespace {

std::vector<DeviceEvents> ProfileDevices(const xplane::ProfileTrace& trace) {
  std::map<uint64_t, uint64_t> counts;  // ordered: the list is ascending
  for (const OwnedEvent& e : trace.events) ++counts[e.event.device.value()];
  std::vector<DeviceEvents> out;
  for (const auto& [d, n] : counts) {
    const std::string& name = d < trace.devices.size() ? trace.devices[d].recording.name : "";
    out.push_back({DeviceId(d), n, false, name, xplane::IsHostAllocator(name)});
  }
  return out;
}

StartSummary ProfileStartSummary(const xplane::ProfileDevice& dev) {
  const xplane::StartState& s = dev.start;
  StartSummary out;
  out.segments = s.grown ? s.regions.size() : 1;
  for (const xplane::StartChunk& c : s.chunks) {
    if (c.kind == xplane::StartChunkKind::kHole) continue;
    ++out.live_blocks;
    out.live_blocks_freed_in_trace += c.kind == xplane::StartChunkKind::kKnown;
  }
  if (s.grown) {
    for (const xplane::StartRegion& r : s.regions) out.reserved += Bytes(static_cast<uint64_t>(r.size));
  } else if (s.limit && *s.limit > 0) {
    out.reserved = Bytes(static_cast<uint64_t>(*s.limit));
  }
  out.live_bytes = Bytes(static_cast<uint64_t>(std::max<int64_t>(0, s.bytes_in_use_before)));
  if (s.peak_before) out.peak_before = Bytes(static_cast<uint64_t>(std::max<int64_t>(0, *s.peak_before)));
  out.notes = s.notes;
  return out;
}

std::optional<RecordedLimit> ProfileLimit(const xplane::ProfileDevice& dev) {
  if (!dev.start.limit || *dev.start.limit <= 0) return std::nullopt;
  return RecordedLimit{
      Bytes(static_cast<uint64_t>(*dev.start.limit)),
      fmt::format("bytes_allocated + bytes_available + bytes_reserved of {}", dev.recording.name)};
}

RecordedSettings ProfileSettings(const xplane::ProfileTrace& trace, const xplane::ProfileDevice& dev) {
  RecordedSettings s;
  s.framework = trace.framework;
  s.host_memory = xplane::IsHostAllocator(dev.recording.name);
  if (dev.start.pool_estimate) s.pool_grown = dev.start.grown;
  if (dev.start.first_region) s.first_region = static_cast<uint64_t>(*dev.start.first_region);
  return s;
}

// Every allocator of the profile is a device (its index); their facts are a
// few sums over the inferred start state, made at once.
RecordedFacts ProfileFacts(const xplane::ProfileTrace& trace) {
  RecordedFacts f;
  f.metadata = trace.metadata;
  f.description = trace.framework == Framework::kUnknown
                      ? trace.form
                      : fmt::format("{}, {}", trace.form, FrameworkName(trace.framework));
  f.devices = ProfileDevices(trace);
  f.records_figures = true;
  for (size_t i = 0; i < trace.devices.size(); ++i) {
    const xplane::ProfileDevice& dev = trace.devices[i];
    DeviceFacts d;
    d.settings = ProfileSettings(trace, dev);
    d.limit = ProfileLimit(dev);
    d.start_summary = ProfileStartSummary(dev);
    f.by_device.emplace(DeviceId(i), std::move(d));
  }
  return f;
}

class ProfileRecording final : public Recording {
 public:
  ProfileRecording(const std::string& path, TraceFormat format, xplane::ProfileTrace trace)
      : Recording(path, format, ProfileFacts(trace)), trace_(std::move(trace)) {}

  absl::StatusOr<std::unique_ptr<EventReader>> Events(std::optional<DeviceId>) const override {
    return std::make_unique<xplane::ProfileEventReader>(trace_);
  }

 private:
  const xplane::ProfileTrace trace_;
};

absl::StatusOr<std::unique_ptr<Recording>> Open(const std::string& path, TraceFormat format) {
  absl::StatusOr<xplane::ProfileTrace> t = xplane::ReadProfileTraceFile(path);
  if (!t.ok()) return absl::InvalidArgumentError(t.status().message());
  return std::unique_ptr<Recording>(new ProfileRecording(path, format, *std::move(t)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recording>> OpenXplaneRecording(const std::string& path) {
  return Open(path, TraceFormat::kXplane);
}

absl::StatusOr<std::unique_ptr<Recording>> OpenMemoryProfileRecording(const std::string& path) {
  return Open(path, TraceFormat::kMemoryProfile);
}

}  // namespace hbmsim::trace
