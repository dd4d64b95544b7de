// XLA's rematerialization warning (docs/formats/xla.md; tpu-and-xla.md §2.6),
// found anywhere in a log:
//
//   ... hlo_rematerialization.cc:3005] Can't reduce memory use below 16.00GiB
//   (17179869184 bytes) by rematerialization; only reduced to 19.00GiB
//   (20401094656 bytes), down from 24.00GiB (25769803776 bytes) originally
//
// (one line in a log). Three numbers: the limit the pass aimed for, the peak
// after rematerialization and the peak before. Both peaks are the pass's own
// no-fragmentation count of live bytes, so `after` is a lower bound on what
// the program needs: no allocator and no bytes_limit below it can run it.
#ifndef HBMSIM_TRACE_XLA_REMAT_WARNING_H_
#define HBMSIM_TRACE_XLA_REMAT_WARNING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hbmsim::trace::xla {

struct RematWarning {
  int line = 0;
  uint64_t limit = 0;                               // A: the memory limit rematerialization aimed for
  uint64_t after = 0;                               // B: the peak it reached
  uint64_t before = 0;                              // C: the peak before it ran
  std::string limit_text, after_text, before_text;  // XLA's own rounding ("16.00GiB")

  // B - A: how far the program stays over the target (0 if not over).
  uint64_t over_target() const { return after > limit ? after - limit : 0; }
  // C - B: what rematerialization saved.
  uint64_t saved() const { return before > after ? before - after : 0; }
};

// Every warning in `log`, in line order (none is not an error). A line with
// "Can't reduce memory use below" that does not go on as above is an
// InvalidArgument "<source>:<line>: ..." (a cut or garbled log).
absl::StatusOr<std::vector<RematWarning>> FindRematWarnings(std::string_view log, std::string_view source);

// FindRematWarnings on a file, read line by line (training logs run to
// gigabytes). NotFound "<path>: cannot read" when it cannot be opened.
absl::StatusOr<std::vector<RematWarning>> ReadRematWarningsFile(const std::string& path);

// The warning on one log line: nullopt when the line has none, an error
// (naming source:line) when it has a garbled one.
absl::StatusOr<std::optional<RematWarning>> ParseRematLine(std::string_view line, int number,
                                                           std::string_view source);

// The `hbmsim diagnose` section for the warnings (empty string for none).
std::string RenderRematText(const std::vector<RematWarning>& warnings);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_REMAT_WARNING_H_
