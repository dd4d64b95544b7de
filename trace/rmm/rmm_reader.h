// Reads the CSV that RAPIDS RMM's logging_resource_adaptor writes
// (docs/formats/rmm-log.md; tpu-and-xla.md §5.1 of the reference notes):
//
//   Thread,Time,Action,Pointer,Size,Stream
//   140202006063936,08:21:48.312812,allocate,0x7f8b2a000000,256,0x0
//   140202006063936,08:21:48.312951,free,0x7f8b2a000000,256,0x0
//   140202006063936,08:21:48.313002,allocate failure,0x0,85899345920,0x7f8b00001020
//
// into hbmsim events:
//   allocate          -> alloc <id> <Size> addr=<Pointer> stream=<s> t=<us>
//   free              -> free <id> stream=<s> t=<us>
//   allocate failure  -> mark rmm_allocate_failure:<Size> t=<us>, and a RecordedFailure
//
// Buffer ids: each allocate gets the next id (1, 2, ...); a free finds the id
// of its pointer, so a pointer reused after its free gets a new id.
// Streams: the Stream column is a cudaStream_t printed as a pointer. 0x0 (the
// default stream) is stream 0; every other value gets 1, 2, ... in order of
// first appearance (RMM's own replayer mis-reads them as decimal and puts
// everything on stream 0; we keep them apart).
// Time: spdlog's "%H:%M:%S.%f", microseconds since midnight; a jump back of more
// than 12 hours is midnight passing (a day is added). "1634567890.123456"
// (seconds) is accepted too. Smaller steps back (threads racing to the log) are
// clamped so t= never decreases. Thread is read but not used: RMM serialises
// its log, and the order of the rows is the order of the events.
//
// Errors are InvalidArgument "file:line: ...": a missing header, a row without
// six fields, an unknown action, a bad number, an allocate of a pointer that is
// live, a free of a pointer that is not, or a free whose size differs from its
// allocate's. The reader holds only the live pointers, never the whole file.
#ifndef HBMSIM_TRACE_RMM_RMM_READER_H_
#define HBMSIM_TRACE_RMM_RMM_READER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::rmm {

// An `allocate failure` row: the OOM the recording saw.
struct RecordedFailure {
  int line = 0;
  uint64_t bytes = 0;
  StreamId stream;
  uint64_t allocs_before = 0;  // successful allocate rows before it
};

class RmmLogReader : public EventReader {
 public:
  // NotFound "<path>: cannot read" when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<RmmLogReader>> Open(const std::string& path);
  // True when `first_line` is the adaptor's CSV header: lets a format sniffer
  // pick this reader (surrounding spaces and a '\r' are ignored).
  static bool IsRmmHeader(std::string_view first_line);
  // Reads `text` as if it were the file `name` (for tests and pipes).
  static std::unique_ptr<RmmLogReader> FromString(std::string text, std::string name);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override;

  const std::vector<RecordedFailure>& failures() const { return failures_; }
  // (Stream column value, stream id), in order of first appearance.
  const std::vector<std::pair<uint64_t, uint64_t>>& streams() const { return stream_order_; }

 private:
  struct LiveBuffer {
    uint64_t id = 0;
    uint64_t bytes = 0;
  };
  struct Row;

  RmmLogReader(std::unique_ptr<std::istream> in, std::string name);
  absl::Status Error(std::string_view what) const;
  absl::StatusOr<bool> ReadHeader();
  absl::StatusOr<Row> ParseRow(std::string_view line);
  absl::StatusOr<uint64_t> ParseTime(std::string_view text);
  StreamId StreamFor(uint64_t raw);
  absl::Status ToEvent(const Row& row, Event& e);

  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::string line_text_;
  std::string label_;
  int line_ = 0;
  bool header_seen_ = false;
  TraceMetadata metadata_;
  absl::flat_hash_map<uint64_t, LiveBuffer> live_;  // by pointer
  absl::flat_hash_map<uint64_t, uint64_t> stream_ids_;
  std::vector<std::pair<uint64_t, uint64_t>> stream_order_;
  std::vector<RecordedFailure> failures_;
  uint64_t next_id_ = 1;
  uint64_t allocs_ = 0;
  uint64_t day_offset_us_ = 0;
  std::optional<uint64_t> last_time_us_;
};

}  // namespace hbmsim::trace::rmm

#endif  // HBMSIM_TRACE_RMM_RMM_READER_H_
