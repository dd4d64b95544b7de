// Reads the text of XLA's BufferAssignment::ToString() (the
// `*-buffer-assignment.txt` dump, docs/formats/xla.md):
//
//   BufferAssignment:
//   allocation 0: size 1024, parameter 0, shape |f32[256]| at ShapeIndex {}:
//    value: <0 p0 @0> (size=1024,offset=0): f32[256]{0}
//   allocation 1: size 2048, preallocated-temp:
//    value: <3 add.1 @0> (size=1024,offset=0): f32[256]{0}
//    value: <7 tuple.2{1} (phi) @0> (size=1024,offset=1024): f32[256]{0}
//
//   Total bytes used: 3072 (3.0KiB)
//
//   Used values:
//   <0 p0 @0>
//    positions: ...
//
// Taken: every allocation header (index, size, the flags after the size) and
// every ` value:` line under it (id, name with its shape index when the
// instruction is a tuple, size, offset). "Used values:" and anything after it
// is not read, except an appended "HloLiveRange (max N):" section (older
// dumps), whose position is returned so the caller can parse it.
#ifndef HBMSIM_TRACE_XLA_BUFFER_ASSIGNMENT_TEXT_H_
#define HBMSIM_TRACE_XLA_BUFFER_ASSIGNMENT_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"
#include "trace/layer.h"

namespace hbmsim::trace::xla {

struct AssignedValue {
  uint64_t id = 0;
  std::string name;  // "add.1", or "tuple.2{1}" for an element of a tuple-shaped instruction
  Bytes size;
  uint64_t offset = 0;  // inside its allocation
  bool tuple_shaped = false;  // its shape (after the "): ") is a tuple "(...)": an index table
  int line = 0;
};

struct Allocation {
  uint64_t index = 0;
  Bytes size;
  std::string flags;  // what followed "size N" ("parameter 0, ..., maybe-live-out"), trimmed
  std::vector<AssignedValue> values;
  int line = 0;
};

struct BufferAssignmentText {
  std::vector<Allocation> allocations;  // file order
  // The appended HloLiveRange text (older dumps) and its first line number.
  std::optional<std::string_view> live_range_text;
  int live_range_first_line = 0;
};

// `text` must start with "BufferAssignment:". InvalidArgument
// "<source>:<line>: ..." on a malformed allocation or value line, a value
// before any allocation, an offset+size beyond its allocation, or an
// allocation index or value id listed twice. The returned view points into `text`.
absl::StatusOr<BufferAssignmentText> ParseBufferAssignmentText(std::string_view text,
                                                               std::string_view source);

// True when `head` (a file's first bytes) starts like a buffer-assignment dump.
bool LooksLikeBufferAssignmentText(std::string_view head);
// True when `head` starts like a live-range dump.
bool LooksLikeLiveRangeText(std::string_view head);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_BUFFER_ASSIGNMENT_TEXT_H_
