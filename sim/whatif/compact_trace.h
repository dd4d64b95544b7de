// A trace read once into memory for the many trial replays of `size` and
// `compare`: one 40-byte PackedEvent per replayed event of the selected
// device, nothing else. Tags, labels, times and recorded addresses are
// dropped (no policy decision reads them); shapes are interned once each;
// marks and other devices' events are counted and dropped. Buffer and
// program ids are mapped at load time to dense slots (reused once freed), so
// a trial keeps its live handles in a vector indexed by slot instead of a
// hash map: memory is 40 bytes per event plus the peak number of live ids.
//
// The loader applies the engine's checks (a free of an id that is not live is
// an error naming file:line), so a trial never meets bad input.
#ifndef HBMSIM_SIM_WHATIF_COMPACT_TRACE_H_
#define HBMSIM_SIM_WHATIF_COMPACT_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/baselines/offline_planner.h"
#include "allocator/core/shape.h"
#include "allocator/core/units.h"
#include "trace/core/event.h"

namespace hbmsim {

inline constexpr uint32_t kNoShape = ~uint32_t{0};

struct PackedEvent {
  uint64_t bytes = 0;  // alloc, program_load
  uint64_t id = 0;     // buffer or program id as in the trace
  uint64_t index = 0;  // the event's index in the file, as `replay` numbers it
  uint32_t slot = 0;   // dense: buffers and programs have separate slot spaces
  uint32_t stream = 0;
  uint32_t shape = kNoShape;  // index into CompactTrace::shapes
  EventKind kind = EventKind::kAlloc;
};
static_assert(sizeof(PackedEvent) == 40, "keep the packed event small: the trace lives in memory");

struct CompactTrace {
  std::string path;
  std::vector<PackedEvent> events;
  std::vector<TensorShape> shapes;
  uint32_t buffer_slots = 0;  // the most buffer ids live at once
  uint32_t program_slots = 0;
  uint64_t events_read = 0;
  uint64_t events_dropped = 0;  // marks and other devices' events
  DeviceId device;
  Bytes peak_live_bytes;            // the engine's definition: requested bytes of live buffers and programs
  uint64_t peak_live_position = 0;  // position in `events` that first reached the peak
  std::optional<std::string> device_bytes;  // the `# device_bytes:` metadata, unparsed

  uint64_t MemoryBytes() const {
    return events.capacity() * sizeof(PackedEvent) + shapes.capacity() * sizeof(TensorShape);
  }
};

// Reads `path` (any format OpenTrace knows) once. `device`: nullopt means the
// first event's. Errors are InvalidArgument with the reader's file:line.
absl::StatusOr<CompactTrace> LoadCompactTrace(const std::string& path, std::optional<DeviceId> device);

// Live intervals for the offline planner, keyed by PackedEvent::index.
std::vector<BufferInterval> CompactBufferIntervals(const CompactTrace& trace);

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_COMPACT_TRACE_H_
