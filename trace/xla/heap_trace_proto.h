// The HeapSimulatorTrace events of a serialized BufferAssignmentProto (what
// JAX's compiled.memory_analysis().serialized_buffer_assignment_proto holds)
// or of an HloProto (`*.hlo_proto.pb`, whose field 3 is one), as events:
//
//   ALLOC b              -> alloc b <size of logical buffer b>
//   SHARE_WITH b, c      -> nothing: b reuses c's memory; b joins c's group
//   FREE b               -> free <group root> when b was the group's last live member
//
// So the canonical buffer's lifetime is the union of its sharers' (a chain of
// shares resolves to the first buffer). Sizes come from logical_buffers,
// addr= from the `assigned` offsets of the trace's buffer_allocation_index
// (XLA's own packing), tag= from instruction_name, t= from event order (the
// event's position counted over all traces, so it never decreases).
//
// Each heap_simulator_traces entry is its own heap, so it replays as its own
// device: trace i is device i (`hbmsim replay --device i` picks one; the
// default is the first event's, trace 0). Metadata `xla_trace_<i>` says
// which allocation and how many events each device has.
//
// Errors name the file and a byte offset for bytes that are not a valid
// protobuf, or the field path ("heap_simulator_traces[0].events[3]") for an
// event that contradicts the rest (unknown buffer, double alloc, free of a
// buffer that is not live, share with a buffer that is not live).
#ifndef HBMSIM_TRACE_XLA_HEAP_TRACE_PROTO_H_
#define HBMSIM_TRACE_XLA_HEAP_TRACE_PROTO_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/xla/xla_trace.h"

namespace hbmsim::trace::xla {

// `bytes` is the whole serialized message; `source` names it in messages.
absl::StatusOr<XlaTrace> ParseHeapSimulatorProto(std::string_view bytes, std::string_view source);

// ParseHeapSimulatorProto on a file.
absl::StatusOr<XlaTrace> ReadHeapSimulatorProtoFile(const std::string& path);

// True when the file starts like a BufferAssignmentProto or an HloProto: its
// first top-level fields (up to 64) are length-delimited fields 1-4 whose
// lengths fit the file (the last may run past the end: a cut file is still
// reported as a protobuf, with the byte offset), and the first field's
// contents start with a tag byte, and its first 256 bytes hold a control
// byte other than tab, CR and LF, which text never does (wire_check.h).
// Reads a few bytes per field.
bool LooksLikeXlaProtoFile(const std::string& path);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_HEAP_TRACE_PROTO_H_
