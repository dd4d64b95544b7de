// Reads a CS:APP Malloc Lab `.rep` trace, the input of the lab's `mdriver`
// (docs/formats/csapp-rep.md; tpu-and-xla.md §5.3 of the reference notes):
//
//   20000        header line 1: suggested heap size (2002 lab; the 2022 CMU driver: weight)
//   3            header line 2: number of ids, i.e. the largest id + 1
//   8            header line 3: number of operations that follow
//   1            header line 4: weight (2002 lab; the 2022 CMU driver: peak bytes)
//   a 0 512      ptr_0 = malloc(512)
//   r 0 640      ptr_0 = realloc(ptr_0, 640)
//   f 0          free(ptr_0)
//
// into hbmsim events:
//   a id bytes -> alloc <n> <bytes> tag=rep:<id>
//   r id bytes -> alloc <m> <bytes> tag=rep:<id>:realloc, then free <n>
//   f id       -> free <n>
//
// Realloc is modelled as a MOVE: the new block is allocated while the old one
// is still live, then the old one is freed. That is what a device allocator
// does (none grows a block in place), and it is the worst case for a host
// allocator; hbmsim's peak live bytes can therefore exceed mdriver's peak
// payload, which counts a realloc as growing in place.
// Buffer ids: each a and r gets the next id (1, 2, ...); the lab's id is kept
// in the tag. An id may be allocated again after its free.
// Header lines 1 and 4 mean different things in different lab versions, so
// they are kept as metadata (`rep_header_1`, `rep_header_4`) and not used.
//
// Errors are InvalidArgument "file:line: ...": a header line that is not a
// plain number or a header cut short, an unknown operation, a missing, extra
// or bad field, an id at or above the declared number of ids, an a of a live
// id, an r or f of an id that is not live, more operations than declared; at
// the end, fewer operations than declared or a largest id that is not the
// declared number of ids - 1 (these name the header line). Nothing is reserved
// from the declared counts: the reader holds only the live ids.
#ifndef HBMSIM_TRACE_CSAPP_REP_READER_H_
#define HBMSIM_TRACE_CSAPP_REP_READER_H_

#include <array>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::csapp {

struct RepHeader {
  uint64_t line1 = 0;  // suggested heap size (2002) or weight (2022): not used
  uint64_t num_ids = 0;
  uint64_t num_ops = 0;
  uint64_t line4 = 0;             // weight (2002) or peak bytes (2022): not used
  std::array<int, 4> lines = {};  // where each header value was, for messages
};

class RepReader : public EventReader {
 public:
  // Opens `path` and reads its 4-line header: NotFound "<path>: cannot read",
  // or InvalidArgument "<path>:<line>: ..." for a bad header.
  static absl::StatusOr<std::unique_ptr<RepReader>> Open(const std::string& path);
  // Reads `text` as if it were the file `name` (tests, pipes, fuzzers).
  static absl::StatusOr<std::unique_ptr<RepReader>> FromString(std::string_view text, std::string name);
  // True when the first non-blank line of `head` (a file's first bytes) is a
  // plain number: no other format starts so.
  static bool LooksLikeRep(std::string_view head);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override;

  const RepHeader& header() const { return header_; }

 private:
  struct LiveBlock {
    uint64_t buffer = 0;
    uint64_t bytes = 0;
  };

  RepReader(std::unique_ptr<std::istream> in, std::string name);
  static absl::StatusOr<std::unique_ptr<RepReader>> Start(std::unique_ptr<RepReader> reader);
  absl::Status Error(std::string_view what) const;
  absl::Status ErrorAt(int line, std::string_view what) const;
  // The next non-blank line, trimmed; nullopt at the end of the input.
  absl::StatusOr<std::optional<std::string_view>> NextLine();
  absl::Status ReadHeader();
  absl::Status Operation(std::string_view line, Event& e);
  absl::Status Alloc(uint64_t id, uint64_t bytes, bool realloc, Event& e);
  absl::Status CheckCountsAtEnd() const;

  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::string line_text_;
  std::string tag_;
  int line_ = 0;
  RepHeader header_;
  TraceMetadata metadata_;
  absl::flat_hash_map<uint64_t, LiveBlock> live_;  // by the lab's id
  uint64_t ops_ = 0;
  std::optional<uint64_t> max_id_;
  std::optional<uint64_t> pending_free_;  // the old block of a realloc, freed on the next call
  uint64_t next_buffer_ = 1;
};

}  // namespace hbmsim::trace::csapp

#endif  // HBMSIM_TRACE_CSAPP_REP_READER_H_
