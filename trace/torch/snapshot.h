// The PyTorch CUDA memory snapshot (torch.cuda.memory._snapshot() /
// _dump_snapshot(); reference/pytorch-caching-allocator.md §3) as C++ values.
//
// One parser reads every format generation seen in the wild
// (docs/formats/torch-snapshot.md):
//   gen1  blocks carry `history: [{addr, real_size, frames}]`, no block
//         address; trace entries {action, addr, size, stream} (torch 2.0 era)
//   gen2  blocks {address, size, requested_size, state, frames}; segments add
//         segment_pool_id and is_expandable; no time_us
//   gen3  gen2 + time_us on trace entries
//   gen4  gen3 + top-level allocator_settings and external_annotations
//   gen5  gen4 + user_metadata on trace entries, graph_capture_record_stream_reuse
// and the bare-list form (torch.cuda.memory_snapshot(): a list of segments).
// The generation is inferred from the keys present, not read from the file.
//
// What is kept: segments and their blocks (block addresses computed from the
// segment address and the sizes before them when the file has none), trace
// entries per device, and allocator_settings. Stack frames (`frames`, gen1's
// `history[0].frames`), `category`, `user_metadata` and `compile_context` go
// into one ContextTable (trace/core/context_table.h), each distinct frame
// list once, so exports can hand them back to the viewers; no simulation
// reads them. `external_annotations` are kept as they are.
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "allocator/core/block_state.h"
#include "allocator/core/units.h"
#include "trace/core/context_table.h"
#include "trace/layer.h"
#include "trace/pickle/pickle_tree.h"

namespace hbmsim::trace {

// A snapshot block's state is a BlockState (allocator/core/block_state.h):
// "active_allocated" kInUse, "active_pending_free" (docs: "active_awaiting_free")
// kPendingFree, "inactive" kFree; TorchBlockStateName spells them back.

// gen1: one allocation made in a block (History: ptr and unrounded size).
struct HistoryAlloc {
  Offset addr;
  Bytes real_size;
};

struct SnapshotBlock {
  Offset address;
  Bytes size;
  Bytes requested_size;  // the unrounded request; 0 for inactive blocks
  BlockState state = BlockState::kFree;
  // gen1 only: the allocations made in this block, newest first (history[0]
  // of a live block is the block itself; a free block keeps those of the
  // blocks merged into it).
  std::vector<HistoryAlloc> history;
  uint32_t frames = 0;  // a list of Snapshot::context
};

enum class SegmentType : uint8_t { kSmall, kLarge };

struct SnapshotSegment {
  DeviceId device;
  Offset address;
  Bytes total_size;  // cudaMalloc'd bytes (one mapped range for expandable segments)
  Bytes allocated_size;
  Bytes active_size;
  Bytes requested_size;
  StreamId stream;  // the cudaStream_t value; 0 = default stream
  SegmentType type = SegmentType::kLarge;
  std::pair<int64_t, int64_t> pool_id{0, 0};  // (0, 0) = the default pool
  bool is_expandable = false;
  uint32_t frames = 0;                // a list of Snapshot::context
  std::vector<SnapshotBlock> blocks;  // tile the segment in address order
};

enum class TraceAction : uint8_t {
  kAlloc,          // addr = block, size = requested bytes
  kFreeRequested,  // addr = block, size = requested bytes
  kFreeCompleted,  // the block is back in the pool
  kFree,           // "free": before torch split it into free_requested + free_completed
  kSegmentAlloc,   // cudaMalloc: addr = segment base, size = segment bytes
  kSegmentFree,    // cudaFree
  kSegmentMap,     // expandable segment grows: addr = start of the mapped range
  kSegmentUnmap,
  kSnapshot,  // _snapshot() called; size = active bytes
  kOom,       // size = rounded request; device_free = cudaMemGetInfo free bytes
  kOther,     // any other action (annotate, user_defined, ...): counted, not interpreted
};
std::string_view TraceActionName(TraceAction a);

// A large snapshot is millions of these, so they are packed to 48 bytes
// (was 80): the time's presence is a flag beside the action, and the frames
// and labels, which few distinct entries differ in, are an index into
// Snapshot::entry_contexts (notes/perf-snap.md).
struct TraceEntry {
  TraceAction action = TraceAction::kOther;
  bool has_time = false;
  uint16_t other_action = 0;  // for kOther: index into Snapshot::other_action_names
  uint32_t context = 0;       // frames and labels: index into Snapshot::entry_contexts
  Offset addr;
  Bytes size;
  StreamId stream;
  uint64_t time = 0;  // time_us when has_time
  Bytes device_free;  // oom only

  std::optional<uint64_t> time_us() const { return has_time ? std::optional<uint64_t>(time) : std::nullopt; }
};
static_assert(sizeof(TraceEntry) == 48);

struct DeviceTrace {
  DeviceId device;
  std::vector<TraceEntry> entries;  // oldest first
};

struct AllocatorSettings {
  // Every key in file order, its value spelled as Python prints it
  // ("True", "-1", "0.0", "{'1': 0, ...}" for dicts).
  std::vector<std::pair<std::string, std::string>> entries;
  std::string alloc_conf;                 // PYTORCH_CUDA_ALLOC_CONF, the last settings string
  std::optional<int64_t> max_split_size;  // bytes; -1 = unlimited
  std::optional<bool> expandable_segments;
  std::optional<double> garbage_collection_threshold;
  // (interval in MiB, divisions), ascending by interval.
  std::vector<std::pair<uint64_t, uint64_t>> roundup_power2_divisions;

  const std::string* Find(std::string_view key) const;
};

struct Snapshot {
  std::string file_name;
  int generation = 0;                      // 1..5, see above
  bool bare_list = false;                  // the file was a list of segments, not a dict
  std::vector<SnapshotSegment> segments;   // in file order (sorted by address)
  std::vector<DeviceTrace> device_traces;  // index = device ordinal; may be empty
  std::optional<AllocatorSettings> allocator_settings;
  size_t external_annotations = 0;
  // Frames and labels of blocks and entries; its `annotations` are the
  // well-formed external_annotations.
  ContextTable context;
  std::vector<std::string> other_action_names;  // names behind TraceAction::kOther
  // The distinct contexts of trace entries (TraceEntry::context); 0 is the
  // empty one, what a TraceEntry made in code refers to.
  std::vector<EventContext> entry_contexts = {EventContext{}};

  const EventContext& ContextOf(const TraceEntry& e) const { return entry_contexts[e.context]; }
};

// Builds the model from an unpickled snapshot. Errors name the file and the
// value's path: "snap.pickle: segments[3].blocks[2].size: expected int, found str".
absl::StatusOr<Snapshot> ParseSnapshot(const PickleTree& tree);

// Unpickles `path` safely and parses it. The device traces are converted
// while the file is unpickled and leave the tree batch by batch
// (snapshot_stream.h), so memory follows what is kept, not the file.
absl::StatusOr<Snapshot> LoadSnapshotFile(const std::string& path);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_H_
