// The allocator state at the START of a device's trace, rebuilt from the
// final `segments` by undoing the trace backwards, as MemoryViz's "Allocator
// State History" view does (reference/pytorch-caching-allocator.md §4):
//
//   final segments ──undo entry n-1──▶ ... ──undo entry 0──▶ initial state
//
//   undo alloc            the block at addr was not live before: drop it
//   undo free_completed   the block was live (pending free): add it back
//   undo free_requested   the block was not yet pending free
//   undo free (legacy)    the block was live: add it back
//   undo segment_alloc    the segment did not exist: drop it (it must be empty)
//   undo segment_free     the segment existed (empty): add it back
//   undo segment_map      the mapped range was not mapped: cut it out
//   undo segment_unmap    the range was mapped: add it, merging with neighbours
//
// A replay that starts from this state (segments not created in the trace,
// blocks live at the start) can then place every recorded alloc itself.
//
// A block freed during the trace comes back with its requested size only;
// the allocator's block size is not recorded, so `size` is the request
// rounded up to 512 bytes (the native allocator's minimum rounding) and
// `size_known` is false. The real block may have been larger (an unsplit
// remainder), never smaller, so the estimate cannot create false overlaps;
// where the trace's first alloc into the free space after such a block lands
// past its start, by at most what a large segment leaves unsplit, the block
// owned the space before it and gets it (ClaimRemainders).
// Anything the walk cannot undo (an alloc with no live block, an address
// outside every segment, a segment_alloc undone while blocks are still live
// in it...) is reported, and the walk goes on.
#ifndef HBMSIM_TRACE_TORCH_INITIAL_STATE_H_
#define HBMSIM_TRACE_TORCH_INITIAL_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "allocator/core/units.h"
#include "trace/layer.h"
#include "trace/torch/snapshot.h"

namespace hbmsim::trace {

struct InitialBlock {
  Offset address;
  Bytes size;
  bool live = false;          // allocated at the start of the trace; otherwise free space
  bool size_known = true;     // false: `size` is the request rounded up (see above)
  bool pending_free = false;  // live but awaiting free (active_pending_free)
  Bytes requested_size;       // live blocks: the request; 0 for free space
  uint32_t frames = 0;        // live blocks: the allocation's stack (Snapshot::context), 0 if unknown
};

struct InitialSegment {
  Offset address;
  Bytes total_size;
  StreamId stream;
  SegmentType type = SegmentType::kLarge;
  bool is_expandable = false;
  bool in_final_state = true;        // false: freed (segment_free / unmap) during the trace
  std::vector<InitialBlock> blocks;  // tile the segment: live blocks and the free gaps between them
};

struct InitialState {
  DeviceId device;
  std::vector<InitialSegment> segments;  // ascending by address
  // Counts of what the walk undid, for reports and tests.
  uint64_t live_blocks = 0;                 // blocks live at the start
  uint64_t live_blocks_freed_in_trace = 0;  // of those, freed during the trace
  uint64_t remainders_claimed = 0;          // of those, grown by the free space the trace shows they held
  // Problems found, first 100 in trace order of discovery (newest entry first),
  // each "device_traces[0][17]: alloc at 0x7f0000000000: no live block there".
  std::vector<std::string> issues;
  uint64_t issue_count = 0;  // all of them, including those past the first 100
};

// Rebuilds the state at the start of device `device`'s trace. Only the
// snapshot's segments of that device are used.
InitialState RebuildInitialState(const Snapshot& snap, DeviceId device);

// Each device's start state of ONE snapshot, rebuilt on first use and then
// shared, immutable, by every reader of that snapshot: the walk depends only
// on the snapshot and the device, and every trial of `size` or the advice
// opens a fresh reader (its std::map walk was the hottest code of a sized
// snapshot). Safe to use from several threads (`--jobs`).
class InitialStateCache {
 public:
  // `snap` must be the snapshot of every earlier call.
  std::shared_ptr<const InitialState> Of(const Snapshot& snap, DeviceId device);

 private:
  std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const InitialState>> by_device_;  // guarded by mu_
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_INITIAL_STATE_H_
