// The out-of-memory texts of JAX, XLA and the TPU runtime, read from a
// pasted log: each block found becomes an OomText with the figures it shows
// (seen, with the text as printed and its precision), the figures worked
// out from them (derived, saying how), a verdict and what would fit.
//
//   kind                    recognised by                             verdict
//   tpu-allocation          "Attempting to allocate X. That was not   oom (X > free) or fragmentation
//                           possible. There are Y free. [Due to        (X <= free, largest region < X)
//                           fragmentation, the largest contiguous
//                           region of free memory is Z.]"
//   tpu-allocatable         "Could not allocate N bytes in memory M;   oom or fragmentation, the same way
//                           A bytes allocatable, B bytes available"
//   buffer-assignment       "Out of memory while trying to allocate N  undetermined (no free figure shown);
//                           bytes." + "BufferAssignment OOM            temp vs parameters vs outputs
//                           Debugging." stats, peak buffers
//   program-reservation     "Attempting to reserve X at the bottom of  program does not fit
//                           memory. ... There are F free, R reserved,
//                           and V reservable." [HBM capacity block]
//   compile-time            "Ran out of memory in memory space hbm.    program does not fit
//                           Used X of Y hbm." [usage, requirement,
//                           largest program allocations]
//   allocation-request      "Out of memory while trying to allocate N  undetermined (no free figure shown)
//                           bytes." alone; "Failed to allocate request
//                           for X (NB) on device ordinal K"
//   bfc-header              "Allocator (GPU_0_bfc) ran out of memory   undetermined without the chunk listing
//                           trying to allocate X" (no chunk listing)
//   allocator-stats         "AllocatorStats" block (no failure)        no failure shown
//
// Sizes printed as "31.06M", "3.95G", "6.00MiB", "2.648 GiB" are binary
// (the runtime's capacity "8.00G" is 8 GiB; "529.00M (554,696,704 bytes)"
// shows it), rounded to what was printed: a comparison closer than that
// precision is said to be undecidable rather than guessed.
#ifndef HBMSIM_TRACE_OOM_TEXT_OOM_TEXT_H_
#define HBMSIM_TRACE_OOM_TEXT_OOM_TEXT_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::trace::oom_text {

struct Figure {
  std::string name;        // "requested", "free", "largest_free", "hlo_temp_utilization", ...
  double value = 0;        // bytes (whole), a percentage, or an expansion factor
  std::string unit = "B";  // "B", "%", "x"
  double precision = 0;    // ± what the printed text leaves open (0: exact)
  bool derived = false;
  std::string text;  // as printed ("31.06M"); for a derived figure, how ("requested - largest_free")
};

// One of "Largest program allocations" or "Peak buffers".
struct ProgramAllocation {
  int index = 0;
  std::optional<Figure> size;
  std::optional<Figure> unpadded;
  std::optional<Figure> padding;  // "Extra memory due to padding"
  std::string expansion;          // "32.0x"
  std::string op;                 // op_name (op_type when no name)
  std::string shape;
  // The bytes of `shape`'s elements, unpadded (f64[31,200,300,300]: 8 × 31 × 200 × 300 × 300),
  // when its element type and dimensions read; derived, exact.
  std::optional<int64_t> shape_bytes;
  std::string source;  // "models.py:689" from source_file / source_line
  std::string label;   // "XLA label" / "XLA Label"
  std::string type;    // "HLO temp", "entry parameter", ...
  bool cut = false;    // the block ends before its fields did
};

struct OomText {
  std::string kind;
  size_t line = 0;      // 1-based, where the block starts
  std::string verdict;  // "oom", "fragmentation", "program does not fit", "undetermined", "no failure shown"
  std::string why;      // the verdict from the figures, in a sentence
  // Seen first, in text order, then derived. A deque: a derived figure is
  // added while pointers to the seen ones are held.
  std::deque<Figure> figures;
  std::vector<ProgramAllocation> allocations;
  std::vector<std::string> would_fit;
  std::vector<std::string> missing;  // what a complete block would show and this one does not
  std::vector<size_t> repeated_at;   // lines where the same block is printed again

  const Figure* Find(std::string_view name) const;
};

// Every block of `text` in order. Never fails on a text: a block cut short
// keeps what it shows (missing says the rest); none found is an empty list.
std::vector<OomText> ReadOomTexts(std::string_view text);
// The first bytes of a log read (the blocks are near the failure; a longer
// log is read up to here).
inline constexpr size_t kMaxLogBytes = size_t{64} << 20;
// The bytes of an XLA shape's elements ("f32[4096,128,3]{2,1,0:T(8,128)}", "s64[]"), without
// padding; nullopt for a tuple, an unknown element type or sub-byte one, or an overflow.
std::optional<int64_t> ShapeBytes(std::string_view shape);

// The same from a file, its first kMaxLogBytes; errors: "cannot read PATH: REASON".
absl::StatusOr<std::vector<OomText>> ReadOomTextFile(const std::string& path);

}  // namespace hbmsim::trace::oom_text

#endif  // HBMSIM_TRACE_OOM_TEXT_OOM_TEXT_H_
