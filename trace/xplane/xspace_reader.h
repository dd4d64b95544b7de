// The BFC memory events of a profiler XSpace (`<host>.xplane.pb`, written by
// jax.profiler.trace, tf.profiler.experimental.start, TensorBoard's profile
// callback), as a Profile (profile.h).
//
//   XSpace.planes[]            "/host:CPU", "/device:GPU:0", "/host:metadata", ...
//     .event_metadata{id→name} "MemoryAllocation", "MemoryDeallocation", ...
//     .stat_metadata{id→name}  "allocator_name", "addr", ... (and, in newer
//                              files, the interned string values: XStat.ref_value)
//     .lines[]                 threads ("tf_Compute", "python3", "py_xla_execute")
//       .timestamp_ns          the line's start
//       .events[]              metadata_id, offset_ps, stats[]
//
// An event is a memory record when its metadata is named MemoryAllocation or
// MemoryDeallocation, on whatever plane and line it sits (they are instants
// on /host:CPU threads in every recording seen). Its time is
// line.timestamp_ns·1000 + offset_ps. A stat value may be int64, uint64,
// double (fragmentation is an int64 when exactly 0), an inline string or a
// reference into stat_metadata; each is accepted where a number or a string
// is expected, so old and new files read alike.
//
// Errors: bytes that are not a protobuf name the byte offset where the wire
// format breaks; a memory event without allocator_name names the plane, line
// and event index.
#ifndef HBMSIM_TRACE_XPLANE_XSPACE_READER_H_
#define HBMSIM_TRACE_XPLANE_XSPACE_READER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/xplane/profile.h"

namespace hbmsim::trace::xplane {

// `bytes` is the whole serialized XSpace; `source` names it in messages.
absl::StatusOr<Profile> ParseXSpace(std::string_view bytes, std::string_view source);

// The whole file, as ParseXSpace.
absl::StatusOr<Profile> ReadXSpaceFile(const std::string& path);

// True when `head` (the first bytes of a file) starts like an XSpace: field 1
// (a plane, length-delimited) whose message opens with an optional id and a
// name starting with "/" (every plane: "/host:CPU", "/device:GPU:0") or
// "Task Environment".
bool LooksLikeXSpace(std::string_view head);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_XSPACE_READER_H_
