// Reads the `mem_log_dev<N>.txt` that STAlloc's Trace mode writes
// (docs/formats/stalloc-mem-log.md; tpu-and-xla.md §5.2 of the reference notes).
// Its allocator hook writes one line per cudaMalloc/cudaFree through a C++
// ostream, so pointers and streams are printed as `void*` ("0x7f1e41329c00",
// a null one as "0") and sizes in decimal; its Python hooks append marker
// lines of the form `<name> : <value>`:
//
//   Iteration Index : 0
//   micro-batch : F
//   decoder.layers.0.mlp->MoELayer Layer : F-start
//   1 0x7f1e41329c00 4096 0
//   0 0x7f1e41329c00 4096 0
//
// into hbmsim events:
//   1 ptr size stream     -> alloc <id> <size> addr=<ptr> stream=<s> device=<N>
//   0 ptr size stream     -> free <id> stream=<s> device=<N>
//   Iteration Index : k   -> mark iteration=k            (k a number or "end")
//   micro-batch : F|B|W   -> mark micro_batch=F
//   <l>-><M> Layer : F-start -> mark layer=<l>-><M>:F-start   ([FBW]-start|end)
//   <name> : <value>      -> mark <name>=<value>         (blanks become '_')
//
// Buffer ids: each alloc line gets the next id (1, 2, ...); a free finds the
// id of its pointer, so a pointer reused after its free gets a new id.
// Streams: 0 (the default stream) is stream 0; every other value gets 1, 2, ...
// in order of first appearance. Device: <N> of a file named mem_log_dev<N>.txt,
// else 0. There are no time stamps: order is the only clock.
//
// Tolerated: a line with a null pointer and size 0 (a zero-byte request that
// got no memory) produces no event; null_pointer_lines() counts them.
// Errors are InvalidArgument "file:line: ...": a line that is neither an event
// nor a marker, a status other than 0/1, a bad number, an alloc of a pointer
// that is live, a free of a pointer that is not, a free whose size differs
// from its alloc's, a null pointer with a non-zero size, an unknown
// micro-batch or layer phase, a line longer than 4096 characters. The reader
// holds only the live pointers, never the whole file.
#ifndef HBMSIM_TRACE_STALLOC_MEM_LOG_READER_H_
#define HBMSIM_TRACE_STALLOC_MEM_LOG_READER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::stalloc {

// <N> of ".../mem_log_dev<N>.txt"; nullopt for any other name.
std::optional<uint64_t> DeviceFromMemLogName(std::string_view path);

class MemLogReader : public EventReader {
 public:
  // NotFound "<path>: cannot read" when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<MemLogReader>> Open(const std::string& path);
  // Reads `text` as if it were the file `name` (the device comes from `name`
  // too). For tests, pipes and fuzzers.
  static std::unique_ptr<MemLogReader> FromString(std::string_view text, std::string name);
  // True when the first line of a file (`head`: its first bytes) is a mem_log
  // event or marker line, which no other format starts with.
  static bool LooksLikeMemLog(std::string_view head);

  absl::StatusOr<bool> Next(Event& e) override;
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string Location() const override;

  // (stream value as logged, stream id), in order of first appearance.
  const std::vector<std::pair<uint64_t, uint64_t>>& streams() const { return stream_order_; }
  uint64_t null_pointer_lines() const { return null_pointer_lines_; }

 private:
  struct LiveBuffer {
    uint64_t id = 0;
    uint64_t bytes = 0;
    int line = 0;  // of its alloc, for messages
  };

  MemLogReader(std::unique_ptr<std::istream> in, std::string name);
  absl::Status Error(std::string_view what) const;
  // Fills `e`; false when the line produces no event (a tolerated null pointer).
  absl::StatusOr<bool> EventLine(std::string_view line, Event& e);
  absl::Status MarkerLine(std::string_view line, Event& e);
  absl::Status Alloc(uint64_t ptr, uint64_t bytes, Event& e);
  absl::Status Free(uint64_t ptr, uint64_t bytes, Event& e);
  StreamId StreamFor(uint64_t raw);

  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::string line_text_;
  std::string label_;
  int line_ = 0;
  DeviceId device_;
  TraceMetadata metadata_;
  absl::flat_hash_map<uint64_t, LiveBuffer> live_;  // by pointer
  absl::flat_hash_map<uint64_t, uint64_t> stream_ids_;
  std::vector<std::pair<uint64_t, uint64_t>> stream_order_;
  uint64_t next_id_ = 1;
  uint64_t null_pointer_lines_ = 0;
};

}  // namespace hbmsim::trace::stalloc

#endif  // HBMSIM_TRACE_STALLOC_MEM_LOG_READER_H_
