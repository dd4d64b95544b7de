#include "trace/text/line_reader.h"

#include <cstring>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace hbmsim::trace {

LineReader::LineReader(std::unique_ptr<ByteSource> source, size_t max_line_bytes, size_t block_bytes)
    : source_(std::move(source)),
      max_line_bytes_(max_line_bytes),
      capacity_(max_line_bytes + 2 + block_bytes),
      buf_(new char[capacity_]) {}

absl::StatusOr<bool> LineReader::Next(std::string_view& line) {
  if (skipping_long_line_) {
    absl::StatusOr<bool> skipped = SkipRestOfLine();
    if (!skipped.ok() || !*skipped) return skipped;
  }
  while (true) {
    const size_t pending = end_ - begin_;
    const char* start = buf_.get() + begin_;
    if (const void* nl = std::memchr(start, '\n', pending); nl != nullptr) {
      const size_t length = static_cast<const char*>(nl) - start;
      return Emit(length, length + 1, line);
    }
    if (at_eof_) {
      if (pending == 0) return false;
      return Emit(pending, pending, line);  // a last line without "\n"
    }
    if (pending > max_line_bytes_ + 1) {
      ++line_number_;
      begin_ = end_ = 0;
      skipping_long_line_ = true;
      return absl::InvalidArgumentError(fmt::format("line longer than {} bytes", max_line_bytes_));
    }
    if (absl::Status s = Refill(); !s.ok()) return s;
  }
}

absl::StatusOr<bool> LineReader::Emit(size_t length, size_t consumed, std::string_view& line) {
  const char* start = buf_.get() + begin_;
  begin_ += consumed;
  ++line_number_;
  if (length > 0 && start[length - 1] == '\r') --length;
  if (length > max_line_bytes_) {
    return absl::InvalidArgumentError(fmt::format("line longer than {} bytes", max_line_bytes_));
  }
  line = std::string_view(start, length);
  return true;
}

absl::StatusOr<bool> LineReader::SkipRestOfLine() {
  while (true) {
    const char* start = buf_.get() + begin_;
    if (const void* nl = std::memchr(start, '\n', end_ - begin_); nl != nullptr) {
      begin_ += static_cast<const char*>(nl) - start + 1;
      skipping_long_line_ = false;
      return true;
    }
    begin_ = end_ = 0;
    if (at_eof_) return false;
    if (absl::Status s = Refill(); !s.ok()) return s;
  }
}

absl::Status LineReader::Refill() {
  const size_t pending = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, pending);
    begin_ = 0;
    end_ = pending;
  }
  absl::StatusOr<size_t> got = source_->Read(buf_.get() + end_, capacity_ - end_);
  if (!got.ok()) return got.status();
  if (*got == 0) at_eof_ = true;
  end_ += *got;
  bytes_read_ += *got;
  return absl::OkStatus();
}

}  // namespace hbmsim::trace
