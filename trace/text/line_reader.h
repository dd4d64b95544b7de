// Splits a ByteSource into lines with bounded memory.
//
// The buffer holds at most one maximal line plus one block:
//
//   buf_: [consumed | begin_ .. unconsumed .. end_ | free space ]
//          <------------- max_line + 2 + block ------------->
//
// Lines are found with memchr and handed out as views into the buffer, valid
// until the next call. A line longer than the cap is rejected as soon as more
// than cap+1 bytes without a newline are buffered (one byte of slack for a
// "\r" before the "\n"), so a gigabyte with no newline costs one buffer, not a
// gigabyte. After that error the rest of the long line is skipped, block by
// block, so a lenient caller can go on with the next line.
#ifndef HBMSIM_TRACE_TEXT_LINE_READER_H_
#define HBMSIM_TRACE_TEXT_LINE_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/text/byte_source.h"

namespace hbmsim::trace {

class LineReader {
 public:
  static constexpr size_t kMaxLineBytes = size_t{1} << 20;
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  explicit LineReader(std::unique_ptr<ByteSource> source, size_t max_line_bytes = kMaxLineBytes,
                      size_t block_bytes = kBlockBytes);

  // The next line without its "\n" or "\r\n": true; false at the end of the
  // input. Errors carry no location: "line longer than 1048576 bytes", or the
  // source's read error. line_number() then names the offending line.
  absl::StatusOr<bool> Next(std::string_view& line);

  // 1-based number of the line last returned or rejected (0 before any).
  uint64_t line_number() const { return line_number_; }
  // Bytes pulled from the source so far (tests check reading stays bounded).
  uint64_t bytes_read() const { return bytes_read_; }
  size_t buffer_capacity() const { return capacity_; }

 private:
  // Moves the unconsumed bytes to the front and reads one block after them.
  absl::Status Refill();
  // Discards input up to and including the next "\n".
  absl::StatusOr<bool> SkipRestOfLine();
  // Hands out [begin_, begin_ + length) as a line and consumes `consumed` bytes.
  absl::StatusOr<bool> Emit(size_t length, size_t consumed, std::string_view& line);

  std::unique_ptr<ByteSource> source_;
  size_t max_line_bytes_;
  size_t capacity_;
  std::unique_ptr<char[]> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool at_eof_ = false;
  bool skipping_long_line_ = false;
  uint64_t line_number_ = 0;
  uint64_t bytes_read_ = 0;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TEXT_LINE_READER_H_
