// Internal to trace/torch: reading a snapshot's device traces while the file
// is unpickled, so that a large snapshot never exists as a whole value tree.
//
// A trace is a list of small dicts, millions of them in a long recording; as
// a tree they cost about three times the file, and their 80-byte TraceEntry
// copies another file's worth (a 381 MB snapshot peaked at 1.72 GB). The
// TraceStream is a PickleListSink (trace/pickle/list_sink.h): offered the
// items of a list whose first batch is all dicts with a str `action`, it
// converts each batch to TraceEntry at once and the unpickler discards the
// batch's nodes. The entries wait in fixed-size chunks (no vector doubling)
// until ParseSnapshot reaches the list under device_traces[d] and moves them
// in.
//
// Results are those of the tree walk: entries are converted by the same
// ParseTraceEntry, in file order (which is device order), with one
// ContextReader shared with the rest of the parse; the budget counts every
// entry and the nodes discarded. An error in an entry is kept with its path
// relative to the list and reported when ParseSnapshot reaches the list, so
// the first error in parse order wins as before. A taken list that turns out
// not to be a device trace means the tree lacks its items: LoadSnapshotFile
// then reads the file again without a stream (AllMoved). The context ids are
// renumbered at the end into the tree walk's order (RestoreContextOrder).
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_STREAM_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_STREAM_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "trace/pickle/list_sink.h"
#include "trace/torch/fields.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_context.h"

namespace hbmsim::trace {

// Keys seen while parsing that tell the format generations apart.
struct GenerationClues {
  bool block_history = false;       // gen1
  bool segment_expandable = false;  // gen2+
  bool time_us = false;             // gen3+
  bool user_metadata = false;       // gen5
};

// One entry of device_traces[d] (`d` a dict) into `e`.
bool ParseTraceEntry(FieldReader& r, ContextReader& c, PickleValue d, const ValuePath& at, Snapshot& snap,
                     TraceEntry& e, GenerationClues& clues);

// Numbers the frames, lists and labels of `snap` as a whole-tree parse does
// (segments first); ParseSnapshot calls it after a stream.
void RestoreContextOrder(Snapshot& snap);

class TraceStream final : public PickleListSink {
 public:
  // Entries' labels, frames and unknown action names go into `snap`.
  TraceStream(std::string_view file_name, Snapshot& snap);

  bool Take(const PickleTree& tree, PickleNodeId list, const PickleNodeId* items, size_t n) override;
  void Dropped(PickleNodeId first) override;

  ContextReader& context() { return context_; }
  const GenerationClues& clues() const { return clues_; }
  // Whether `list` (a node of the finished tree) was streamed.
  bool Streamed(PickleNodeId list) const { return index_.contains(list); }
  // Moves the entries of `list` into `out` (found at `at`), spending one of
  // `r`'s budget per entry; false with r's error for an entry that failed.
  bool MoveTo(PickleNodeId list, FieldReader& r, const ValuePath& at, std::vector<TraceEntry>& out);
  // Every streamed list was reached by the parse (moved, or its error reported).
  bool AllMoved() const;

 private:
  static constexpr size_t kChunk = size_t{1} << 16;  // entries per chunk (3 MB)
  // Mapped, not malloc'd: glibc keeps freed 3 MB blocks for reuse, so
  // chunks freed while MoveTo fills the final vector would still count.
  struct Chunk {
    Chunk();
    Chunk(Chunk&& o) noexcept : data(std::exchange(o.data, nullptr)), size(o.size) {}
    Chunk& operator=(Chunk&&) = delete;
    ~Chunk();
    TraceEntry* data;
    size_t size = 0;
  };
  struct List {
    std::vector<Chunk> chunks;
    uint64_t count = 0;           // entries converted
    absl::Status error;           // of entry `count`, its path relative to the list
    const std::vector<TraceEntry>* moved = nullptr;  // where MoveTo put them
    bool reached = false;                            // MoveTo was called
  };

  Snapshot& snap_;
  FieldReader reader_;  // errors only: a stream's work is bounded by the file
  ContextReader context_;
  GenerationClues clues_;
  absl::flat_hash_map<PickleNodeId, size_t> index_;  // list node -> lists_
  std::vector<List> lists_;
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_STREAM_H_
