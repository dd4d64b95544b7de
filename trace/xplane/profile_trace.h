// A Profile (profile.h) as hbmsim events: every allocator is a device.
//
//   device 0        the busiest GPU allocator (most records; a name without
//                   "host"), then the others in name order
//   start state     per device, before anything else and without t=: an
//                   alloc per inferred chunk of start_state.h in address
//                   order (tag=preexisting for a chunk the recording frees,
//                   preexisting_unknown for inferred live bytes, start_free
//                   for inferred free space), then a free of each start_free
//                   alloc. The first carries addr= (the inferred region
//                   base), known chunks their recorded address; so a BFC
//                   replay under --check-recorded rebuilds the layout.
//                   Grown regions (start_state.h): per region, in the order
//                   BFC's doubling creates them, `alloc <size> addr=<base>
//                   tag=start_region` and its free, then the region's chunks
//                   Top-down devices (start_state.h: addresses are offsets
//                   below the limit, a TPU's): a program_load of the first
//                   record's bytes_reserved (the runtime's programs, at the
//                   bottom), then the chunks from the limit downward, highest
//                   first, so a top-down best fit tiles them in place
//   lost events     a memory_profile.json's records are reconciled first
//                   (sampled.h): a missing free or allocation is a `free` /
//                   `alloc tag=lost_event` (no addr=: the recording did not
//                   report it); bytes moved at unknown addresses are an
//                   `alloc tag=lost_event` of that size, or frees of the
//                   unknown chunks (the start state's preexisting_unknown and
//                   earlier such allocs, latest first; a surplus allocated back)
//   records         merged by time over all devices: MemoryAllocation ->
//                   `alloc <id> <requested_bytes> addr= tag=<tf_op>
//                   shape=<dtype>[dims] t=`, MemoryDeallocation -> `free <id>`
//                   of the chunk at that address; `mark step=N` before the
//                   first allocation of a new step
//   t=              microseconds since the profile's first memory record
//
// Metadata: `source`, `framework`, `device_bytes` (device 0's limit) and per
// device `xplane_device_<i>` ("GPU_0_bfc records=154 allocations=77 ..."),
// `device_bytes_<i>` and one `xplane_start_<i>` line per start-state note.
#ifndef HBMSIM_TRACE_XPLANE_PROFILE_TRACE_H_
#define HBMSIM_TRACE_XPLANE_PROFILE_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"
#include "trace/xplane/profile.h"
#include "trace/xplane/sampled.h"
#include "trace/xplane/start_state.h"

namespace hbmsim::trace::xplane {

inline constexpr std::string_view kPreexistingTag = "preexisting";
inline constexpr std::string_view kUnknownTag = "preexisting_unknown";
inline constexpr std::string_view kStartFreeTag = "start_free";
inline constexpr std::string_view kStartRegionTag = "start_region";
inline constexpr std::string_view kStartPieceTag = "start_piece";
inline constexpr std::string_view kLostEventTag = "lost_event";  // a record sampled.h inserted

struct ProfileDevice {
  AllocatorRecording recording;  // with the records a sampled profile lost (sampled.h)
  StartState start;
  MissingEvents missing;         // what the reconciliation inserted (none for an XSpace)
  // Bytes a Missing::kBytes free could not release: no unknown chunk was left.
  int64_t unknown_unreleased = 0;
  std::vector<uint64_t> buffer_of_record;  // the buffer id each record allocates or frees
  size_t first_record_event = 0;           // event index of the device's first record
};

// Which record an event came from.
struct EventOrigin {
  int32_t device = -1;  // -1: not a record (start state, mark)
  int32_t record = -1;
};

struct ProfileTrace {
  std::string source;
  std::string form;       // "xplane" or "memory_profile_json"
  Framework framework = Framework::kUnknown;  // kTensorFlow, kJax or kUnknown
  std::vector<ProfileDevice> devices;
  std::vector<OwnedEvent> events;
  std::vector<EventOrigin> origins;  // one per event
  // The first start_events events lay out the inferred start state (metadata
  // `start_events`: replays count the peak live bytes from the state they leave).
  uint64_t start_events = 0;
  TraceMetadata metadata;

  // The device whose allocator is called `name`, or nullopt.
  std::optional<uint32_t> DeviceNamed(std::string_view name) const;
};

// A pinned-host allocator (gpu_host_bfc, xla_gpu_host_bfc): its name says "host".
bool IsHostAllocator(std::string_view name);

// Infers each allocator's start state and builds the events. Errors name the
// file and the record (start_state.h).
absl::StatusOr<ProfileTrace> BuildProfileTrace(Profile profile);

// Whether the file starts like an .xplane.pb or a memory_profile.json(.gz).
bool IsProfileFile(const std::string& path);

// An .xplane.pb or a memory_profile.json(.gz), by content.
absl::StatusOr<ProfileTrace> ReadProfileTraceFile(const std::string& path);

// Serves the events of a ProfileTrace. Location() is "<source>: <record's
// place in the file>" for a record, "<source>: start state of <device>" else.
class ProfileEventReader : public EventReader {
 public:
  explicit ProfileEventReader(ProfileTrace trace) : trace_(std::move(trace)) {}
  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return trace_.metadata; }
  std::string Location() const override;
  // The figures of the record behind the last event (none for start-state events).
  std::optional<RecordedFigures> current_figures() const override;
  const ProfileTrace& trace() const { return trace_; }

 private:
  ProfileTrace trace_;
  size_t next_ = 0;
};

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_PROFILE_TRACE_H_
