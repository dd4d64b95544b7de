// The text route (docs/formats/xla.md; tpu-and-xla.md §2.7.3): a buffer-assignment
// dump joined with its live ranges on the value name into intervals
// {size, start, end, offset}, then into alloc/free events (xla_trace.h has the
// tie rule).
//
// The join, for an assigned value printed as N ("add.1" or "tuple.2{1}"):
//   1. a live range named exactly N;
//   2. else, when N has no shape index, one named N{} (the live-range text
//      always prints the index, the buffer assignment only for tuples);
//   3. else N without its shape index (older live-range text printed none).
// Values with no live range are skipped and counted in a warning; so are
// live ranges with no assigned value.
//
// Aliasing: values of one allocation at one offset whose live ranges overlap
// share that memory (XLA never overlaps two distinct live buffers), so they
// become one interval: the union of the ranges, the largest size, the lowest
// id, the first value's name. Counted in metadata `xla_merged_values`.
//
// addr= is XLA's own placement: the allocations laid end to end in index
// order (each starts where the previous one ends) plus the value's offset,
// so `--check-recorded` compares a policy with XLA's packing.
// All values of every allocation replay on device 0.
#ifndef HBMSIM_TRACE_XLA_TEXT_PAIR_H_
#define HBMSIM_TRACE_XLA_TEXT_PAIR_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/xla/buffer_assignment_text.h"
#include "trace/xla/live_range_text.h"
#include "trace/xla/xla_trace.h"

namespace hbmsim::trace::xla {

// Joins parsed texts; `ba_source` / `lr_source` name them in warnings.
XlaTrace JoinTextPair(const BufferAssignmentText& assignment, std::string_view ba_source,
                      const LiveRanges& ranges, std::string_view lr_source);

// Parses and joins. Without `live_range_text`, the assignment text must have
// the live ranges appended. Errors name the file and line.
absl::StatusOr<XlaTrace> ParseTextPair(std::string_view assignment_text, std::string_view ba_source,
                                       std::optional<std::string_view> live_range_text = std::nullopt,
                                       std::string_view lr_source = "");

// Opens either file of a pair: X-buffer-assignment.txt finds X-live-range.txt
// beside it (unless its live ranges are appended), and X-live-range.txt finds
// X-buffer-assignment.txt. InvalidArgument naming the file when the other one
// cannot be found or either is malformed.
absl::StatusOr<XlaTrace> ReadTextPairFiles(const std::string& path);

// The other file of a pair ReadTextPairFiles may read beside `path`, by name
// alone (X-buffer-assignment.txt <-> X-live-range.txt); empty for any other
// name. A command treats it as one more input that no output may overwrite.
std::vector<std::string> TextPairPartners(const std::string& path);

// The whole file; NotFound "<path>: cannot read" when it cannot be opened.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_TEXT_PAIR_H_
