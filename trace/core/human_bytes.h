// TensorFlow's strings::HumanReadableNumBytes, digit for digit: BFC dumps print
// every byte total through it ("585.94MiB", "112.5KiB", "256B"), so reports that
// users compare with a real dump must round exactly the same way.
#ifndef HBMSIM_TRACE_CORE_HUMAN_BYTES_H_
#define HBMSIM_TRACE_CORE_HUMAN_BYTES_H_

#include <cstdint>
#include <string>

#include "allocator/core/units.h"
#include "trace/layer.h"

namespace hbmsim::trace {

// < 1024 prints "%lldB"; otherwise the value is divided by 1024 (integer
// division) while it is >= 1 MiB, and printed as n/1024.0 with "%.1fKiB" for
// KiB and "%.2f%ciB" above. Negative values get a leading '-'; INT64_MIN is "-8E".
std::string HumanReadableNumBytes(int64_t num_bytes);

// Bytes beyond INT64_MAX print as INT64_MAX would (TF's counters are int64).
std::string HumanReadableNumBytes(Bytes num_bytes);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_HUMAN_BYTES_H_
