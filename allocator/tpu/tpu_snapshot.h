// Plain data the `tpu` policy exposes for reports: its live buffers and
// resident programs, and what it kept at a failure under
// log_allocations_on_oom. No formatting here (see tpu_messages.h).
#ifndef HBMSIM_ALLOCATOR_TPU_TPU_SNAPSHOT_H_
#define HBMSIM_ALLOCATOR_TPU_TPU_SNAPSHOT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "allocator/core/shape.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

struct TpuBufferInfo {
  BufferId id;
  StreamId stream;
  Offset offset;
  Bytes padded;              // bytes set aside (tile padding and granule included)
  Bytes requested;           // the caller's bytes
  bool queued_free = false;  // released, deallocation not completed yet
  std::optional<TensorShape> shape;
};

struct TpuProgramInfo {
  ProgramId id;
  Offset offset;
  Bytes size;
  bool protected_from_eviction = false;  // the program of the most recent run
};

// What the policy saw when an allocation or a program load failed.
struct TpuOomSnapshot {
  EventIndex event;
  bool program_load = false;  // false: a buffer allocation
  uint64_t id = 0;            // buffer id or program id
  Bytes rounded;              // the padded request
  Bytes free_bytes;
  Bytes largest_free_block;
  std::vector<TpuBufferInfo> buffers;    // largest first, then by address
  std::vector<TpuProgramInfo> programs;  // by address
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_TPU_SNAPSHOT_H_
