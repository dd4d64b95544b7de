#include "trace/binary/byte_window.h"

#include <zlib.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>

#include "fmt/format.h"
#include "trace/binary/format.h"

namespace hbmsim::trace::binary {
namespace {

// A zstd frame may ask for any window. 128 MiB is what `zstd --long` and the
// highest levels use (and libzstd's own default limit); more is refused with
// a message saying so, which bounds what a hostile file can make us hold.
// The writer uses 2 MiB at level 3.
constexpr int kMaxWindowLog = 27;

}  // namespace

ByteWindow::ByteWindow(std::unique_ptr<ByteSource> source, size_t max_record_bytes)
    : source_(std::move(source)), max_record_bytes_(max_record_bytes), buf_(2 * kBlockBytes) {}

ByteWindow::~ByteWindow() {
  if (dstream_ != nullptr) ZSTD_freeDStream(dstream_);
}

absl::StatusOr<size_t> ByteWindow::ReadRaw(uint8_t* dst, size_t n) {
  absl::StatusOr<size_t> got = source_->Read(reinterpret_cast<char*>(dst), n);
  if (!got.ok()) return got.status();
  if (*got == 0) at_eof_ = true;
  file_bytes_read_ += *got;
  return *got;
}

absl::Status ByteWindow::Start() {
  // Read until the magic can be judged (a pipe may deliver a byte at a time).
  while (end_ < kZstdMagic.size() && !at_eof_) {
    absl::StatusOr<size_t> got = ReadRaw(buf_.data() + end_, kBlockBytes - end_);
    if (!got.ok()) return got.status();
    end_ += *got;
  }
  if (end_ < kZstdMagic.size() || std::memcmp(buf_.data(), kZstdMagic.data(), kZstdMagic.size()) != 0) {
    return absl::OkStatus();  // plain: what was read is the window
  }
  dstream_ = ZSTD_createDStream();
  if (dstream_ == nullptr) return absl::ResourceExhaustedError("cannot create a zstd stream");
  ZSTD_DCtx_setParameter(dstream_, ZSTD_d_windowLogMax, kMaxWindowLog);
  in_.resize(std::max(ZSTD_DStreamInSize(), end_));
  std::memcpy(in_.data(), buf_.data(), end_);
  in_pos_ = 0;
  pending_in_ = end_;
  end_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<size_t> ByteWindow::Decompress(uint8_t* dst, size_t n) {
  while (true) {
    if (pending_in_ == 0 && !at_eof_) {
      absl::StatusOr<size_t> got = ReadRaw(in_.data(), in_.size());
      if (!got.ok()) return got.status();
      in_pos_ = 0;
      pending_in_ = *got;
    }
    if (pending_in_ == 0 && at_eof_ && !frame_open_) return 0;
    ZSTD_inBuffer in{in_.data(), in_pos_ + pending_in_, in_pos_};
    ZSTD_outBuffer out{dst, n, 0};
    const size_t ret = ZSTD_decompressStream(dstream_, &out, &in);
    if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge) {
      return absl::InvalidArgumentError(fmt::format(
          "byte {}: the zstd frame needs a window above {} MiB, more than hbmsim allows (the file is not "
          "corrupt: recompress it with `zstd -d -c FILE | zstd -19 -o OTHER`)",
          offset_ + size(), (uint64_t{1} << kMaxWindowLog) >> 20));
    }
    if (ZSTD_isError(ret)) {
      return absl::InvalidArgumentError(fmt::format("byte {}: corrupt zstd data ({}) near compressed byte {}",
                                                    offset_ + size(), ZSTD_getErrorName(ret),
                                                    file_bytes_read_ - pending_in_ + (in.pos - in_pos_)));
    }
    pending_in_ -= in.pos - in_pos_;
    in_pos_ = in.pos;
    frame_open_ = ret != 0;
    if (out.pos > 0) return out.pos;
    if (pending_in_ == 0 && at_eof_ && frame_open_) {
      return absl::InvalidArgumentError(
          fmt::format("byte {}: truncated zstd stream (the file ends inside a frame)", offset_ + size()));
    }
  }
}

uint32_t ByteWindow::ChecksumUpTo(const uint8_t* upto) const {
  const uint8_t* from = buf_.data() + hashed_;
  return static_cast<uint32_t>(crc32_z(crc_, from, static_cast<size_t>(upto - from)));
}

void ByteWindow::MakeRoom() {
  if (begin_ > 0) {
    crc_ = static_cast<uint32_t>(crc32_z(crc_, buf_.data() + hashed_, begin_ - hashed_));
    hashed_ = 0;
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // Grow only when one record is bigger than the buffer; the decoder has
  // already refused records beyond max_record_bytes_.
  const size_t wanted = std::min(end_ + kBlockBytes, max_record_bytes_ + kBlockBytes);
  if (buf_.size() < wanted) buf_.resize(wanted);
}

absl::StatusOr<bool> ByteWindow::Refill() {
  MakeRoom();
  const size_t room = buf_.size() - end_;
  if (room == 0) return false;
  absl::StatusOr<size_t> got =
      compressed() ? Decompress(buf_.data() + end_, room) : ReadRaw(buf_.data() + end_, room);
  if (!got.ok()) return got.status();
  end_ += *got;
  return *got > 0;
}

}  // namespace hbmsim::trace::binary
