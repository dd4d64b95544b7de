// Reads the text of XLA's HloLiveRange::ToString() (the `*-live-range.txt`
// dump, or the same text appended to an older `*-buffer-assignment.txt`):
//
//   HloLiveRange (max 7):
//     InstructionSequence:
//       0:p0
//       1:add.1
//     BufferLiveRange:
//       p0{}:0-7
//       tuple.3{1}:4-6
//     Live ranges at 3 (peak):
//       add.1: 1024 bytes
//
// Only the BufferLiveRange section is used: `<instruction><shape index>:<start>-<end>`,
// times inclusive. The other sections are checked for shape, not used.
#ifndef HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_
#define HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::xla {

struct LiveRangeEntry {
  std::string name;  // "tuple.3{1}", exactly as printed
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive
  int line = 0;
};

struct LiveRanges {
  uint64_t max_time = 0;
  std::vector<LiveRangeEntry> entries;  // file order
};

// `text` must start (after blank lines) with "HloLiveRange (max N):".
// `source` names the file in messages; `first_line` is the line number of
// text's first line in that file (the appended case). InvalidArgument
// "<source>:<line>: ..." on a malformed line, a start after its end, an end
// after max, or a name listed twice.
absl::StatusOr<LiveRanges> ParseLiveRangeText(std::string_view text, std::string_view source,
                                              int first_line = 1);

}  // namespace hbmsim::xla

#endif  // HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_
