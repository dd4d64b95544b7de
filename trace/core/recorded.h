// What a recording knows besides its allocs and frees, in words every format
// can use: the allocator state when its events start, the settings the job
// ran with, the OOMs it hit and the calls its allocator made to the device.
// A format that records none of these leaves them empty (a text trace starts
// from nothing and records no settings).
//
//   start state     segments held when the trace starts, each tiled by its
//                   blocks (live ones carry the buffer id their
//                   `alloc tag=preexisting` event uses)
//   settings        the allocator options the job ran with (PyTorch's
//                   allocator_settings / PYTORCH_CUDA_ALLOC_CONF)
//   recorded OOM    the capacity an OOM implies: reserved then + device_free
//   side entries    a segment_alloc/free/map/unmap or an oom behind an event,
//                   for comparing the simulation with the recording
//   figures         what the recorded allocator reported right after an
//                   event (TF/JAX profiles: BFC's address, chunk size, bytes
//                   in use, fragmentation and peak), for the same comparison
//   limit           the memory limit the recording states for a device
#ifndef HBMSIM_TRACE_CORE_RECORDED_H_
#define HBMSIM_TRACE_CORE_RECORDED_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "allocator/core/units.h"
#include "trace/core/framework.h"
#include "trace/layer.h"

namespace hbmsim::trace {

// A block of a segment held at the trace start.
struct StartBlock {
  Offset address;
  Bytes size;
  Bytes requested;
  bool live = false;
  bool pending_free = false;
  uint64_t id = 0;  // the buffer id its `alloc tag=preexisting` carries; live blocks only
};

struct StartSegment {
  Offset address;
  Bytes size;
  StreamId stream;
  bool small = false;
  bool expandable = false;
  std::vector<StartBlock> blocks;  // tile the segment in address order
};

struct StartSummary {
  uint64_t segments = 0;
  uint64_t live_blocks = 0;
  uint64_t live_blocks_freed_in_trace = 0;
  uint64_t issues = 0;
  Bytes reserved;    // Σ segment sizes
  Bytes live_bytes;  // Σ sizes of the live blocks
  // The recorded allocator's peak bytes in use when the recording began
  // (profiles); nullopt when the recording does not say.
  std::optional<Bytes> peak_before;
  // Each inference the reader needed to build the start state, one line.
  std::vector<std::string> notes;
};

// The trace entry behind a `mark` or an `alloc tag=oom`.
enum class SideAction : uint8_t { kSegmentAlloc, kSegmentFree, kSegmentMap, kSegmentUnmap, kOom, kOther };
struct SideEntry {
  SideAction action = SideAction::kOther;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t device_free = 0;  // oom only
};

// The allocator settings as recorded: PyTorch's allocator_settings (gen4+),
// or what a TF/JAX profile tells about its BFC allocator.
struct RecordedSettings {
  std::string alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF
  std::optional<int64_t> max_split_size;
  std::optional<bool> expandable_segments;
  std::optional<double> garbage_collection_threshold;
  std::vector<std::pair<uint64_t, uint64_t>> roundup_power2_divisions;  // (MiB, divisions)
  // A TF/JAX profile's facts about its BFC allocator (last: PyTorch's are built positionally).
  Framework framework = Framework::kUnknown;  // trace/core/framework.h
  std::optional<bool> host_memory;    // a pinned-host allocator (gpu_host_bfc), not the device's
  std::optional<bool> pool_grown;     // regions grown on demand (allow_growth), as the figures tell
  std::optional<uint64_t> first_region;  // allow_growth's first region size, when the figures tell it
};

// The capacity a recorded OOM implies: the bytes reserved when the first
// `oom` entry of the device's trace was written (the start state's segment
// bytes, plus segment_alloc/map, minus segment_free/unmap before it) plus its
// device_free (cudaMemGetInfo's free bytes then).
struct OomCapacity {
  Bytes capacity;
  Bytes reserved;
  Bytes device_free;
  size_t entry = 0;  // the oom's index in the device's trace
};

// gen1 snapshots: where a block live at the end of the trace was recorded to
// sit (its history[0]), for blocks the trace did not allocate (those are
// compared as allocs already). `past` counts the older history entries of
// every block: allocations made before the snapshot in what is free now, not
// compared.
struct HistoryAddresses {
  struct Live {
    uint64_t addr = 0;
    uint64_t requested = 0;
  };
  std::vector<Live> live;
  uint64_t past = 0;
};

// What the recorded allocator reported right after one event (a profile's
// MemoryAllocation / MemoryDeallocation): each figure when recorded.
struct RecordedFigures {
  bool allocation = true;             // false: a deallocation
  std::optional<uint64_t> addr;       // allocations: the chunk's address
  std::optional<int64_t> chunk_bytes;  // the chunk allocated or freed (rounding included)
  std::optional<int64_t> bytes_in_use;
  // (free pool - largest free chunk) / free pool, free pool = pool - in use,
  // as the runtime printed it (6 significant digits).
  std::optional<double> fragmentation;
  std::optional<int64_t> peak_bytes_in_use;
  std::string where;  // the record's place in the file, for messages
};

// The memory limit a recording states for a device, and how it knows.
struct RecordedLimit {
  Bytes limit;
  std::string how;  // "bytes_allocated + bytes_available + bytes_reserved of GPU_0_bfc"
};

// One device of a recording and how many events its stream yields.
struct DeviceEvents {
  DeviceId device;
  uint64_t events = 0;
  bool recorded_oom = false;
  std::string name;          // the recording's name for it ("GPU_0_bfc"); "" if none
  bool host_memory = false;  // a pinned-host allocator: chosen only when asked for
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_RECORDED_H_
