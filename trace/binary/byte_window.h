// The decoded bytes of a .hbt file, a window at a time. Plain files are read
// block by block; compressed ones (a zstd frame, detected by its magic) are
// decompressed through a zstd stream with a bounded window, so neither costs
// more memory than one record plus one block, whatever the file's length.
//
//   buf_: [ consumed | begin_ .. window .. end_ | free space ]
//
// The decoder parses from window(); when a record runs past its end it calls
// Refill(), which moves the unconsumed tail to the front and appends one more
// block, growing the buffer only if a single record is bigger than it (up to
// max_record_bytes, beyond which the record is rejected as corrupt).
#ifndef HBMSIM_TRACE_BINARY_BYTE_WINDOW_H_
#define HBMSIM_TRACE_BINARY_BYTE_WINDOW_H_

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/text/byte_source.h"

namespace hbmsim::trace::binary {

class ByteWindow {
 public:
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  ByteWindow(std::unique_ptr<ByteSource> source, size_t max_record_bytes);
  ~ByteWindow();
  ByteWindow(const ByteWindow&) = delete;
  ByteWindow& operator=(const ByteWindow&) = delete;

  // Looks at the first bytes and sets up decompression when they are zstd's.
  absl::Status Start();

  const uint8_t* data() const { return buf_.data() + begin_; }
  size_t size() const { return end_ - begin_; }
  void Consume(size_t n) {
    begin_ += n;
    offset_ += n;
  }
  // Decoded offset of data()[0] in the (decompressed) stream.
  uint64_t offset() const { return offset_; }
  bool compressed() const { return dstream_ != nullptr; }
  // True once the input is exhausted and everything decoded is in the window.
  bool at_end() const { return at_eof_ && pending_in_ == 0 && !frame_open_; }

  // Appends more decoded bytes: true if some came, false at the end of input.
  // Errors carry no file name: "byte N: zstd: <reason>" style text is built
  // by the caller from offset(); read errors are passed through.
  absl::StatusOr<bool> Refill();
  // zlib crc32 of every decoded byte from the start of the stream up to
  // `upto` (a pointer into the window). Pure: a record that is decoded again
  // after a Refill() gets the same answer. Consumed bytes are folded into the
  // running value when the window moves, so this costs nothing per event.
  uint32_t ChecksumUpTo(const uint8_t* upto) const;
  // Bytes of the file read so far (for compressed files, where decoded
  // offsets differ from file offsets).
  uint64_t file_bytes_read() const { return file_bytes_read_; }

 private:
  absl::StatusOr<size_t> ReadRaw(uint8_t* dst, size_t n);
  absl::StatusOr<size_t> Decompress(uint8_t* dst, size_t n);
  void MakeRoom();

  std::unique_ptr<ByteSource> source_;
  size_t max_record_bytes_;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t offset_ = 0;
  bool at_eof_ = false;
  uint64_t file_bytes_read_ = 0;
  uint32_t crc_ = 0;    // crc32 of the decoded bytes before buf_[hashed_]
  size_t hashed_ = 0;   // <= begin_

  // Compressed input only.
  ZSTD_DStream* dstream_ = nullptr;
  std::vector<uint8_t> in_;
  size_t in_pos_ = 0;
  size_t pending_in_ = 0;    // compressed bytes in in_ not yet fed to zstd
  bool frame_open_ = false;  // zstd has started a frame it has not finished
};

}  // namespace hbmsim::trace::binary

#endif  // HBMSIM_TRACE_BINARY_BYTE_WINDOW_H_
