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
// The BufferLiveRange section gives the intervals: `<instruction><shape index>:<start>-<end>`,
// times inclusive. The peak list (`name: N bytes`, newer XLA `name{i}: N bytes
// (cumulative: M bytes)`) is kept to be set beside hbmsim's peak
// (listed_peak.h); the instruction sequence is checked for shape, not used.
#ifndef HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_
#define HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::trace::xla {

struct LiveRangeEntry {
  std::string name;  // "tuple.3{1}", exactly as printed
  uint64_t start = 0;
  uint64_t end = 0;  // inclusive
  int line = 0;
};

// "Live ranges at T (peak):" and its `name: N bytes` lines, as XLA printed them.
struct ListedPeak {
  uint64_t time = 0;
  std::vector<std::pair<std::string, uint64_t>> values;  // (name as printed, bytes), file order
};

struct LiveRanges {
  uint64_t max_time = 0;
  std::vector<LiveRangeEntry> entries;  // file order
  std::optional<ListedPeak> peak;
};

// `text` must start (after blank lines) with "HloLiveRange (max N):".
// `source` names the file in messages; `first_line` is the line number of
// text's first line in that file (the appended case). InvalidArgument
// "<source>:<line>: ..." on a malformed line, a start after its end, an end
// after max, or a name listed twice.
absl::StatusOr<LiveRanges> ParseLiveRangeText(std::string_view text, std::string_view source,
                                              int first_line = 1);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_LIVE_RANGE_TEXT_H_
