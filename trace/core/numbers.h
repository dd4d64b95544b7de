// Strict parsers for the numbers that appear in traces and on the command line.
// They accept exactly the documented spellings and say what was wrong otherwise;
// the caller adds the file:line or the option name.
#ifndef HBMSIM_TRACE_CORE_NUMBERS_H_
#define HBMSIM_TRACE_CORE_NUMBERS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"

namespace hbmsim {

// A plain unsigned decimal that fits in 64 bits ("-1" and "1e3" are errors).
absl::StatusOr<uint64_t> ParseU64(std::string_view text);

// Hexadecimal with a 0x prefix, or decimal (the `addr=` attribute).
absl::StatusOr<uint64_t> ParseAddress(std::string_view text);

// A byte count: plain decimal, or decimal followed by KiB, MiB, GiB or TiB
// (the trace format's spellings). With `allow_more_units`, also B, PiB and the
// decimal KB, MB, GB, TB (command-line convenience).
absl::StatusOr<Bytes> ParseBytes(std::string_view text, bool allow_more_units = false);

}  // namespace hbmsim

#endif  // HBMSIM_TRACE_CORE_NUMBERS_H_
