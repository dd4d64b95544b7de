// What a recording says is held on each device at one moment, when it says
// so without addresses: a JAX device memory profile
// (jax.profiler.save_device_memory_profile) lists, per device, the live
// buffers grouped by the Python stack that made them, and the loaded
// executables with no device at all. A state, not a trace: no order, no
// addresses, no times. Reports group it by frame and kind; a probe places it
// through a policy to ask whether one more request fits (sim/inspect).
//
//   HeldState   devices:  [{device, name, entries: [{kind, count, bytes, frames}]}]
//               unplaced: [{kind, ...}]   held, but on no device the recording names
//               table:    the stacks `frames` refers to (context_table.h)
#ifndef HBMSIM_TRACE_CORE_HELD_STATE_H_
#define HBMSIM_TRACE_CORE_HELD_STATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/core/units.h"
#include "trace/core/context_table.h"
#include "trace/layer.h"

namespace hbmsim::trace {

// One group of holdings: `count` things of one kind made at one stack.
struct HeldEntry {
  std::string kind;  // "buffer", "executable"
  uint64_t count = 0;
  // The bytes as recorded. Negative: the runtime reported no size (a TPU
  // executable is recorded as -1 byte each); reports show it as unknown.
  int64_t bytes = 0;
  uint32_t frames = 0;  // a list id of HeldState::table, innermost frame first
};

struct HeldDevice {
  DeviceId device;
  std::string name;                // the recording's label ("cuda:0", "TPU_0(process=0,(0,0,0,0))")
  std::vector<HeldEntry> entries;  // in file order
};

struct HeldState {
  std::string source;               // "JAX device memory profile (pprof)"
  std::vector<HeldDevice> devices;  // ascending by device
  std::vector<HeldEntry> unplaced;  // in file order
  ContextTable table;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_HELD_STATE_H_
