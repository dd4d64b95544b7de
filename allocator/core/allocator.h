// The Allocator contract every policy implements.
//
// Model
// -----
// A policy owns a simulated device address space and answers requests in the
// order the trace issues them. It never reads files or configs: the sim layer
// builds it from a typed Options struct and feeds it events.
//
//   engine ──Allocate(req)──▶ policy ──▶ AllocResult{ok, handle, offset, size}
//          ◀─────────────────         or AllocResult{oom|fragmentation, numbers}
//   engine ──Free(handle)───▶ policy
//
// OOM is a value, never an exception. A failed allocation reports the two
// numbers that decide its verdict:
//   free_bytes          = bytes not held by live buffers or resident programs
//                         (memory the policy could still obtain counts as free)
//   largest_free_block  = the largest request that would succeed right now
// and the verdict is
//   oom            when rounded > free_bytes
//   fragmentation  when rounded <= free_bytes (but no contiguous block fits).
//
// Invariants every policy checks in CheckInvariants() (run after every event
// under --paranoid and in the property tests):
//   blocks tile every region: no gap, no overlap;
//   stats.bytes_in_use == Σ size of live blocks;
//   every policy-specific index (bins, free lists) agrees with the blocks.
#ifndef HBMSIM_ALLOCATOR_CORE_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_CORE_ALLOCATOR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "allocator/core/memory_map.h"
#include "allocator/core/reserved_parts.h"
#include "allocator/core/shape.h"
#include "allocator/core/stats.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

struct AllocRequest {
  BufferId id;
  Bytes bytes;                         // what the caller asked for, un-rounded
  StreamId stream;                     // caching allocators keep per-stream pools
  const TensorShape* shape = nullptr;  // for padding-aware policies; may be null
  EventIndex event;                    // position in the trace, for policy clocks
  // The address the recording saw (`addr=`), under --check-recorded only. A
  // policy may use it solely to choose the base of NEW memory it obtains from
  // the device (a segment created for this request starts where the recorded
  // one did); never to choose a placement inside memory it already holds.
  std::optional<Offset> recorded_address;
};

enum class AllocStatus : uint8_t { kOk, kOom, kFragmentation };
std::string_view AllocStatusName(AllocStatus s);  // "ok", "oom", "fragmentation"

struct AllocResult {
  AllocStatus status = AllocStatus::kOk;
  Handle handle;            // valid when ok; kNullHandle for a zero-byte request
  bool has_offset = false;  // false for a zero-byte request (nothing reserved)
  Offset offset;            // start of the block handed out
  Bytes size;               // bytes set aside, rounding and slack included; 0 if not ok
  Bytes rounded;            // the request after the policy's rounding
  Bytes free_bytes;         // on failure: see the model above
  Bytes largest_free_block;

  bool ok() const { return status == AllocStatus::kOk; }
};

// The handle of an allocation that reserved nothing; Free() ignores it.
inline constexpr Handle kNullHandle{~uint64_t{0}};

// Classifies a failed request from the two numbers of the model above.
inline AllocStatus ClassifyFailure(Bytes rounded, Bytes free_bytes) {
  return rounded > free_bytes ? AllocStatus::kOom : AllocStatus::kFragmentation;
}

// Things a policy did on its own that reports want to show on a timeline.
enum class PolicyEventKind : uint8_t {
  kRegionAdded,        // new memory obtained from the device (bytes = size)
  kRegionExtended,     // an existing region grew in place
  kRegionReleased,     // memory returned to the device
  kGarbageCollection,  // BFC released free regions to retry
  kQueuedFreeWait,     // queued deallocations were completed to retry
  kDefragmentation,    // live buffers were moved (bytes = bytes moved)
  kProgramEvicted,
  kProgramReloaded,
  kCacheFlush,  // a caching allocator released its cache to retry
};
std::string_view PolicyEventKindName(PolicyEventKind k);

struct PolicyEvent {
  PolicyEventKind kind;
  Bytes bytes;
  Offset offset;
  uint64_t detail = 0;  // kind-specific: the region details below, buffers moved, program id, ...
  // The stream the region serves, when it is not the stream of the request
  // being served (a pool every stream shares says 0; see RegionInfo::stream).
  std::optional<uint64_t> stream{};
};

// PolicyEvent::detail of the region kinds, one meaning for every policy, so a
// report tells a segment's pages being unmapped from the segment going away
// without asking which policy it watches.
inline constexpr uint64_t kRegionWhole = 0;          // kRegionAdded/kRegionReleased: the whole region
                                                     // (cudaMalloc/cudaFree); kRegionExtended: it grew
inline constexpr uint64_t kRegionPagesMapped = 1;    // kRegionExtended: physical pages mapped into the
                                                     // region's reserved range (expandable segments)
inline constexpr uint64_t kRegionPagesUnmapped = 2;  // kRegionReleased: pages unmapped; the region's
                                                     // address range stays reserved

class PolicyObserver {
 public:
  virtual ~PolicyObserver() = default;
  virtual void OnPolicyEvent(const PolicyEvent& e) = 0;
};

// Result of a program operation (policies that model loaded executables).
struct ProgramResult {
  bool ok = true;
  Offset offset;
  Bytes size;
  Bytes free_bytes;      // on failure
  Bytes reserved_bytes;  // on failure
  Bytes reservable_bytes;
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Built-in name: "bfc", "tpu", "torch", ...
  virtual std::string_view name() const = 0;

  virtual AllocResult Allocate(const AllocRequest& req) = 0;
  // The memory is reusable at once.
  virtual void Free(Handle h) = 0;
  // Queued deallocation: the caller released the buffer but the device may still
  // use it. Default: the memory stays held until CompleteFree.
  virtual void RequestFree(Handle h) {}
  // The queued deallocation finished. A policy that already completed it on
  // its own (a recovery step) treats this as a no-op.
  virtual void CompleteFree(Handle h) { Free(h); }

  // Loaded executables. Policies without a program model return false and the
  // engine treats program_load/unload as an ordinary alloc/free.
  virtual bool SupportsPrograms() const { return false; }
  virtual ProgramResult LoadProgram(ProgramId pid, Bytes bytes, EventIndex event) { return {}; }
  virtual ProgramResult RunProgram(ProgramId pid, EventIndex event) { return {}; }
  virtual void UnloadProgram(ProgramId pid) {}

  // Stats as of now (largest_free_block_bytes computed exactly).
  virtual AllocatorStats GetStats() const = 0;
  // The recording starts here (the events before only rebuilt the state it
  // began in, sim/engine's ReplayOptions::peak_from): as TF's
  // BFCAllocator::ClearStats(), num_allocs = 0, peak_bytes_in_use =
  // bytes_in_use, largest_alloc_size = 0; a policy with peaks of its own
  // sets those to their current values as its runtime's own reset does
  // (PyTorch's reset_peak_memory_stats(): every peak, reserved bytes too).
  virtual void ClearStats() = 0;
  // GetStats().bytes_in_use, without the rest: asked after every alloc of a
  // run that looks for its peak (sim/whatif/trial.h).
  virtual int64_t BytesInUse() const { return GetStats().bytes_in_use; }
  // Policy-specific counters, appended in a fixed order.
  virtual void AppendCounters(Counters& out) const {}

  // Walks regions and blocks in address order.
  virtual void WalkMemoryMap(MemoryMapVisitor& v) const = 0;

  // The bytes the policy holds from the device now: Σ region sizes less the
  // unmapped blocks (reserved_parts.h). The default walks the memory map; a
  // policy that keeps the sum answers in O(1), as a replay asks after every
  // alloc when it looks for the peak of reserved (sim/report/reserved_explained.h).
  virtual Bytes ReservedBytes() const { return ReservedBytesByWalk(*this); }
  // Why a block takes reserved bytes, in the runtime's own terms: for a live
  // block, the name of its rounding; for any other, why the policy keeps it
  // (reserved_parts.h). Default: GenericCause.
  virtual ReservedCause CauseOf(const BlockContext& c) const { return GenericCause(c); }
  // Every cause CauseOf can give, the rounding's name first: the one list of
  // the policy's terms, declared beside its CauseOf (tests work each by hand
  // and check that CauseOf never gives another). Default: GenericCause's.
  virtual std::span<const std::string_view> ReservedCauses() const { return kGenericCauses; }
  // OkStatus, or the first broken invariant, described.
  virtual absl::Status CheckInvariants() const = 0;

  void set_observer(PolicyObserver* o) { observer_ = o; }

 protected:
  void Notify(const PolicyEvent& e) const {
    if (observer_ != nullptr) observer_->OnPolicyEvent(e);
  }

 private:
  PolicyObserver* observer_ = nullptr;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_ALLOCATOR_H_
