// One gzip inflater for every reader of a gzipped recording (a JAX device
// memory profile, XProf's memory_profile.json.gz), bounded: a few hostile
// bytes can claim gigabytes, so the caller states how much it will hold.
#ifndef HBMSIM_TRACE_CORE_GUNZIP_H_
#define HBMSIM_TRACE_CORE_GUNZIP_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace hbmsim::trace {

// Inflates a gzip (or zlib) stream up to `max_out` bytes. Errors name
// `source` and the compressed byte offset; more than `max_out` bytes is an
// error too.
absl::StatusOr<std::string> GunzipBounded(std::string_view bytes, size_t max_out, std::string_view source);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_CORE_GUNZIP_H_
