// What a TensorFlow/JAX profile records about device memory, read from either
// of its two forms (xspace_reader.h, memory_profile_json.h) into one model:
// the BFC allocator's own report of every allocation and free, per allocator.
//
// Upstream, BFCAllocator::AddTraceMe emits, AFTER each allocation and AFTER
// each free has been applied (so every figure is the state after the event):
//
//   MemoryAllocation / MemoryDeallocation
//     allocator_name     "GPU_0_bfc", "gpu_host_bfc", "xla_gpu_host_bfc", ...
//     bytes_allocated    stats.bytes_in_use (chunk sizes)
//     bytes_reserved     stats.bytes_reserved
//     bytes_available    memory_limit - bytes_reserved - bytes_in_use
//     fragmentation      (free_pool - largest_free_chunk) / free_pool, free_pool =
//                        pool_bytes - bytes_in_use (printed with 6 significant digits)
//     peak_bytes_in_use  stats.peak_bytes_in_use
//     requested_bytes    what the caller asked for
//     allocation_bytes   the chunk size (rounding and internal fragmentation included)
//     addr               the chunk's address
//     tf_op, id (step), region_type, data_type, shape   the op's annotation
//
// Any field may be missing (a TPU profile's deallocations carry no size); the
// model keeps what was there and says so with std::optional.
#ifndef HBMSIM_TRACE_XPLANE_PROFILE_H_
#define HBMSIM_TRACE_XPLANE_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/core/framework.h"

namespace hbmsim::trace::xplane {

// Record times lie within ±kMaxAbsTimePs (2^61 ps, 26 days), so the
// difference of any two fits in int64 (the summary and the trace take
// differences). A file outside is refused, naming the record.
inline constexpr int64_t kMaxAbsTimePs = int64_t{1} << 61;
inline bool TimeInRange(int64_t ps) { return ps >= -kMaxAbsTimePs && ps <= kMaxAbsTimePs; }

// Whether a record is in the file or stands for an event the file lost
// (XProf's sampling, sampled.h): a missing record carries no figures.
enum class Missing : uint8_t {
  kNone,        // recorded
  kFree,        // the free of a chunk whose address is allocated again
  kAllocation,  // the allocation of a chunk the recording frees a second time
  kBytes,       // bytes in use moved by events of unknown address (no addr)
};

struct MemoryRecord {
  bool allocation = true;  // MemoryAllocation; false: MemoryDeallocation
  int64_t time_ps = 0;     // line.timestamp_ns * 1000 + offset_ps (JSON: timeOffsetPs)
  std::optional<uint64_t> addr;
  std::optional<int64_t> requested_bytes;
  std::optional<int64_t> allocation_bytes;
  std::optional<int64_t> bytes_allocated;
  std::optional<int64_t> bytes_available;
  std::optional<int64_t> bytes_reserved;
  std::optional<int64_t> peak_bytes_in_use;
  std::optional<double> fragmentation;
  std::string tf_op;            // empty when absent
  std::optional<int64_t> step;  // the step the allocation belongs to (group_id, else id)
  std::string region_type;      // "output", "temp", "persist", "dynamic", ...
  std::string data_type;        // "float", "int32", ... (numbers are mapped to names)
  std::string shape;            // "[256,28,28,1]"
  std::string where;            // where the record is in the file, for messages
  Missing missing = Missing::kNone;
  // A deallocation that records no size: its chunk as the sampled
  // reconciliation decided from the figures around it (sampled.h).
  std::optional<int64_t> inferred_chunk;
};

struct AllocatorRecording {
  std::string name;                   // allocator_name
  std::vector<MemoryRecord> records;  // in time order (stable for equal times)
  int64_t allocations = 0;
  int64_t deallocations = 0;
};

struct Profile {
  std::string source;                          // the file, for messages
  std::string form;                            // "xplane" or "memory_profile_json"
  Framework framework = Framework::kUnknown;   // kTensorFlow, kJax or kUnknown
  std::vector<AllocatorRecording> allocators;  // sorted by name
};

// TF's DataType numbers (types.proto) as the names XProf prints ("float",
// "int32", ...); an unknown number is written as its decimal value.
std::string DataTypeName(int64_t number);

// Sorts every allocator's records by time (stable), counts them and orders
// the allocators by name. Readers call it last.
void FinishProfile(Profile& p);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_PROFILE_H_
