// Strict parsers for the numbers that appear in traces and on the command line.
// They accept exactly the documented spellings and say what was wrong otherwise;
// the caller adds the file:line or the option name.
#ifndef HBMSIM_TRACE_CORE_NUMBERS_H_
#define HBMSIM_TRACE_CORE_NUMBERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"
#include "trace/layer.h"

namespace hbmsim::trace {

// A plain unsigned decimal that fits in 64 bits ("-1" and "1e3" are errors).
absl::StatusOr<uint64_t> ParseU64(std::string_view text);

// Hexadecimal with a 0x prefix, or decimal (the `addr=` attribute).
absl::StatusOr<uint64_t> ParseAddress(std::string_view text);

// A byte count: plain decimal, or decimal followed by KiB, MiB, GiB or TiB
// (the trace format's spellings). With `allow_more_units`, also B, PiB and the
// decimal KB, MB, GB, TB, and a fraction before a unit ("1.5GiB") when it is a
// whole number of bytes (command-line convenience).
absl::StatusOr<Bytes> ParseBytes(std::string_view text, bool allow_more_units = false);

// For a size ParseBytes accepted with a decimal unit (KB, MB, GB, TB: powers
// of 1000), the sentence that says so; "" otherwise. TensorFlow's logs print
// MiB and call them "MB" ("with 3340 MB memory"), so a number copied from one
// with "MB" is 4.6 % short: the note names the MiB spelling to use instead.
std::string DecimalUnitNote(std::string_view text);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_NUMBERS_H_
