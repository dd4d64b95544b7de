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
#ifndef HBMSIM_TRACE_CORE_RECORDED_H_
#define HBMSIM_TRACE_CORE_RECORDED_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "allocator/core/units.h"

namespace hbmsim {

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
};

// The trace entry behind a `mark` or an `alloc tag=oom`.
enum class SideAction : uint8_t { kSegmentAlloc, kSegmentFree, kSegmentMap, kSegmentUnmap, kOom, kOther };
struct SideEntry {
  SideAction action = SideAction::kOther;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t device_free = 0;  // oom only
};

// allocator_settings, as recorded (PyTorch gen4+).
struct RecordedSettings {
  std::string alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF
  std::optional<int64_t> max_split_size;
  std::optional<bool> expandable_segments;
  std::optional<double> garbage_collection_threshold;
  std::vector<std::pair<uint64_t, uint64_t>> roundup_power2_divisions;  // (MiB, divisions)
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

// One device of a recording and how many events its stream yields.
struct DeviceEvents {
  DeviceId device;
  uint64_t events = 0;
  bool recorded_oom = false;
};

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_CORE_RECORDED_H_
