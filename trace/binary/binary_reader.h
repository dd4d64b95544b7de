// Streaming reader of the .hbt binary trace format (trace/binary/format.h,
// docs/formats/binary-trace.md), plain or zstd-compressed.
//
//   file --ByteSource--> ByteWindow (1 MiB blocks, zstd if the magic says so)
//        --> DecodeEvent (here) --> TraceValidator (the text reader's checks)
//
// Memory is one window (a block plus the largest record, ~3 MiB at most), the
// tag dictionary (<= 4096 tags of <= 256 bytes) and what the validator tracks;
// nothing is allocated per event in steady state. An Event's strings view
// into the window or the dictionary and stay valid until the next Next().
//
// Every error reads "<name>: byte <N>: <what was wrong>", N being the offset
// in the decoded stream of the event or field at fault. Semantic errors carry
// the validator's words, exactly as the text reader reports them. A corrupt or
// truncated file is never recoverable (the next Next() repeats the error); a
// semantic error is, as in the text reader: the event changed nothing.
#ifndef HBMSIM_TRACE_BINARY_BINARY_READER_H_
#define HBMSIM_TRACE_BINARY_BINARY_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace/binary/byte_window.h"
#include "trace/binary/format.h"
#include "trace/core/reader.h"
#include "trace/core/validator.h"

namespace hbmsim::trace {

class BinaryTraceReader : public EventReader {
 public:
  // Opens `path` and reads its header. Errors: "cannot open <path>: ...", or
  // "<path>: byte N: ..." for a bad header.
  static absl::StatusOr<std::unique_ptr<BinaryTraceReader>> Open(const std::string& path);
  static absl::StatusOr<std::unique_ptr<BinaryTraceReader>> FromString(std::string bytes,
                                                                       std::string name = "<string>");
  static absl::StatusOr<std::unique_ptr<BinaryTraceReader>> FromSource(std::unique_ptr<ByteSource> source,
                                                                       std::string name);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  // "<name>: byte <N>" of the event last read.
  std::string Location() const override;

  // 0-based index of the last event decoded (as in TextTraceReader).
  uint64_t event_index() const { return events_ - 1; }
  const TraceValidator& validator() const { return validator_; }
  bool compressed() const { return window_.compressed(); }

 private:
  // Where the delta-coded fields stand after the last event.
  struct DeltaState {
    uint64_t alloc_id = 0;
    uint64_t program_id = 0;
    uint64_t time_us = 0;
    uint64_t addr = 0;
  };

  BinaryTraceReader(std::unique_ptr<ByteSource> source, std::string name);

  absl::Status ReadHeader();
  binary::Decode DecodeHeaderStart(binary::Cursor& c, uint64_t& entries);
  binary::Decode DecodeMetadataEntry(binary::Cursor& c);
  // One record into `e` (or the end record): kOk, kNeedMore, or kMalformed
  // with error_/error_at_ set. State changes only on kOk.
  binary::Decode DecodeEvent(binary::Cursor& c, Event& e);
  // The records nearly every trace is made of (no tag, shape, addr or mark
  // label), when all their possible bytes are in the window: straight-line
  // decoding without bounds checks. False (nothing changed) sends the record
  // to DecodeEvent, which also owns every error message.
  bool DecodeCommonRecord(Event& e);
  binary::Decode DecodeId(binary::Cursor& c, uint8_t kind, DeltaState& s, Event& e);
  binary::Decode DecodeAttributes(binary::Cursor& c, uint8_t head, uint8_t ext, DeltaState& s, Event& e);
  binary::Decode DecodeTag(binary::Cursor& c, Event& e, bool& add_to_dictionary);
  binary::Decode DecodeShape(binary::Cursor& c, Event& e);
  binary::Decode DecodeString(binary::Cursor& c, std::string_view what, std::string_view& out);
  binary::Decode FinishTrace(binary::Cursor& c);
  binary::Decode Malformed(const binary::Cursor& c, std::string message);
  // Runs `decode` on the window, refilling it until the record is whole.
  template <typename F>
  absl::Status DecodeRecord(F decode);
  absl::Status CheckNothingFollows();
  // Every record DecodeCommonRecord leaves, and the end of the trace.
  [[gnu::noinline]] absl::StatusOr<bool> NextRecord(Event& e);
  [[gnu::noinline]] absl::Status ValidationError(const absl::Status& s) const;
  absl::Status ErrorAt(uint64_t offset, std::string_view message) const;

  std::string name_;
  binary::ByteWindow window_;
  TraceMetadata metadata_;
  TraceValidator validator_;
  DeltaState state_;
  std::vector<std::string> dictionary_;  // reserved up front: views stay valid
  uint64_t version_ = 0;  // from the header; 2 and later end with a checksum
  uint64_t metadata_bytes_ = 0;
  uint64_t events_ = 0;
  uint64_t event_offset_ = 0;           // decoded offset of the last event
  bool finished_ = false;               // the end record was read and checked
  bool stopped_ = false;                // finished_ or broken_: the fast path is closed
  std::optional<absl::Status> broken_;  // a corrupt file stays corrupt
  std::string error_;
  const uint8_t* error_at_ = nullptr;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_BINARY_BINARY_READER_H_
