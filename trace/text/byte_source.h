// Where a text trace's bytes come from. The line reader pulls blocks from a
// ByteSource into its own buffer, so a file is never held whole, and tests can
// feed strings or endless generated input through exactly the same path.
#ifndef HBMSIM_TRACE_TEXT_BYTE_SOURCE_H_
#define HBMSIM_TRACE_TEXT_BYTE_SOURCE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace hbmsim::trace {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `n` bytes into `dst`; returns how many, 0 only at the end.
  // Errors carry no location.
  virtual absl::StatusOr<size_t> Read(char* dst, size_t n) = 0;
};

// A file read with POSIX read(2). Error: "cannot open <path>: <strerror>".
absl::StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);

// An in-memory string (tests, small embedded traces).
std::unique_ptr<ByteSource> StringSource(std::string text);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_BYTE_SOURCE_H_
