// Streaming writer of the .hbt binary trace format (trace/binary/format.h,
// docs/formats/binary-trace.md), plain or zstd-compressed.
//
// Records are encoded into a 64 KiB buffer that is handed to the stream (or
// to a zstd stream, whose output goes out in ZSTD_CStreamOutSize chunks) as
// it fills, so writing costs the same memory for ten events or ten billion.
//
// The writer refuses exactly what TextTraceWriter refuses (a tag or label
// with blanks, an attribute on an event that has no place for it, metadata
// the header cannot carry), so every .hbt file converts to text. Finish()
// writes the end-of-trace record with the checksum of every byte before it
// (zstd frames also get zstd's checksum); a file without it (a writer that died)
// reads back as truncated, never as a shorter valid trace.
#ifndef HBMSIM_TRACE_BINARY_BINARY_WRITER_H_
#define HBMSIM_TRACE_BINARY_BINARY_WRITER_H_

#include <zstd.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "trace/core/event.h"
#include "trace/core/reader.h"

namespace hbmsim::trace {

struct BinaryWriterOptions {
  bool compress = false;  // wrap the stream in zstd frames
  int zstd_level = 3;     // zstd's default: fast, and a 2 MiB window
};

class BinaryTraceWriter {
 public:
  explicit BinaryTraceWriter(std::ostream& out, BinaryWriterOptions options = {});
  ~BinaryTraceWriter();
  BinaryTraceWriter(const BinaryTraceWriter&) = delete;
  BinaryTraceWriter& operator=(const BinaryTraceWriter&) = delete;

  // Magic, version and metadata. At most once, before any event; Write()
  // writes an empty header if this was never called.
  absl::Status WriteHeader(const TraceMetadata& metadata);
  absl::Status Write(const Event& e);
  // The end-of-trace record, then everything buffered (and the zstd frame's
  // end) to the stream; "write error" when the stream failed. Once only.
  absl::Status Finish();

  uint64_t events_written() const { return events_; }

 private:
  struct DeltaState {
    uint64_t alloc_id = 0;
    uint64_t program_id = 0;
    uint64_t time_us = 0;
    uint64_t addr = 0;
  };

  void PutVarint(uint64_t v);
  void PutString(std::string_view s);
  void PutTag(std::string_view tag);
  void PutAttributes(const Event& e, uint8_t ext);
  absl::Status FlushIfFull();
  // Hands `n` bytes to the stream, through zstd when compressing.
  absl::Status Emit(const uint8_t* data, size_t n, ZSTD_EndDirective mode);

  std::ostream& out_;
  BinaryWriterOptions options_;
  ZSTD_CCtx* cctx_ = nullptr;
  std::vector<uint8_t> zbuf_;  // compressed output chunk
  std::vector<uint8_t> buf_;
  size_t used_ = 0;
  DeltaState state_;
  absl::flat_hash_map<std::string, uint32_t> dictionary_;  // tag -> 1-based reference
  uint32_t crc_ = 0;  // zlib crc32 of every byte emitted so far (before compression)
  bool header_written_ = false;
  bool finished_ = false;
  uint64_t events_ = 0;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_BINARY_BINARY_WRITER_H_
