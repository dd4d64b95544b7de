// `tpu`: a TPU-style chunked HBM allocator (issue 4; facts in
// tpu-and-xla.md §1 of the reference notes, docs/tpu-model.md for the table of
// what is Google-documented and what is our assumption).
//
// Model
// -----
// One device's HBM is one region [0, hbm_bytes). Buffers are padded to the TPU
// tile layout and rounded to `granule` (tpu_padding.h). Programs are reserved
// first-fit from the bottom [doc: "reserve X at the bottom of memory"]; buffers
// go best fit (smallest free block; highest address among equals) and take the
// block's top end [assumption: fits the two memory_stats samples, §1.6]. Free
// neighbours coalesce at once.
//
//   0                                                                 hbm_bytes
//   ┌────────┬──────┬────────┬─────────────┬─────┬───────┬──────┬──────────┐
//   │ prog A │ prog │  free  │    free     │ buf │ free  │ buf  │   buf    │
//   └────────┴──────┴────────┴─────────────┴─────┴───────┴──────┴──────────┘
//   programs grow up ──▶     ├─ reservable ┤          ◀── buffers take block tops
//   bytes_reservable_limit = bytes_reserved + the free block right above the
//                            highest resident program (at 0 when none)
//
// A buffer allocation that does not fit climbs the recovery ladder [doc E0100
// names the three mechanisms; their order is the model]:
//   1. queued_free_retry: complete every queued deallocation, retry;
//   2. defragment: if rounded <= free bytes, slide every live buffer toward the
//      top keeping their order (around programs and still-queued frees), retry;
//   3. evict_programs: evict resident programs one at a time in eviction_order,
//      never the program of the most recent program_run; after each eviction
//      retry, compacting again when that is what makes the request fit.
// When every rung fails, what the rungs did stands (completed frees, moves,
// evictions): the runtime did it before reporting the error.
// A program_run of an evicted program reloads it first-fit from the bottom,
// evicting other programs (never buffers, never itself) if evict_programs.
//
// Failure numbers (AllocResult, and what CheckInvariants recounts):
//   free_bytes = hbm_bytes − Σ held buffers − Σ resident programs, measured
//                after the ladder ran. A buffer whose queued deallocation is
//                not complete is held; with queued_free_retry the ladder has
//                completed them all, so exactly the memory the enabled rungs
//                can reach counts as free, and a disabled rung's memory does not.
//   verdict    = ClassifyFailure(rounded, free_bytes): oom or fragmentation.
//   largest_free_block (and stats.largest_free_block_bytes) = the largest
//                request the ladder would satisfy now: the largest free block
//                of the layouts the enabled rungs lead to (now; queued frees
//                completed; compacted; evictable programs gone, compacted or
//                not), each counted only when a request of that size would
//                reach it (see LargestRequestNow). The plain largest contiguous
//                free block is the counter `largest_contiguous_free_block_bytes`.
//
// Invariants (CheckInvariants):
//   the blocks tile [0, hbm_bytes) (CheckMemoryMapTiling) and no two free
//   blocks touch; best-fit index == free blocks;
//   bytes_in_use   == Σ size of buffer blocks (in use + queued free) == recount;
//   bytes_reserved == Σ size of program blocks == Σ resident programs;
//   a buffer record is filed under its block's Ref, and its handle is that
//   block's owner; a block holds a buffer iff its record is live;
//   every resident program owns its block; evicted ones own none;
//   padding_in_use == Σ (padded − requested) of live buffers;
//   every offset and size is a multiple of the granule;
//   Σ buffers + Σ programs + Σ free blocks == hbm_bytes.
#ifndef HBMSIM_ALLOCATOR_TPU_TPU_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_TPU_TPU_ALLOCATOR_H_

#include <optional>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "allocator/core/allocator.h"
#include "allocator/tpu/hbm_layout.h"
#include "allocator/tpu/recycling_allocator.h"
#include "allocator/tpu/tpu_options.h"
#include "allocator/tpu/tpu_snapshot.h"

namespace hbmsim::allocator {

// Counters beyond AllocatorStats, appended in this order by AppendCounters.
struct TpuCounters {
  int64_t queued_free_waits = 0;       // times rung 1 completed queued frees
  int64_t queued_frees_completed = 0;  // deallocations rung 1 completed early
  int64_t defragmentations = 0;        // compactions that moved something
  int64_t buffers_moved = 0;
  int64_t bytes_moved = 0;  // Σ size of buffers whose address changed
  int64_t programs_evicted = 0;
  int64_t programs_reloaded = 0;
  int64_t program_load_failures = 0;
  int64_t padding_bytes = 0;  // Σ (padded − requested) over all successful allocations
};

class TpuAllocator final : public Allocator {
 public:
  // `options` must pass ValidateTpuOptions (a zero granule is treated as 1).
  explicit TpuAllocator(const TpuOptions& options);

  std::string_view name() const override { return "tpu"; }
  const TpuOptions& options() const { return options_; }

  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  void RequestFree(Handle h) override;
  void CompleteFree(Handle h) override;  // no-op once the ladder completed it

  bool SupportsPrograms() const override { return true; }
  ProgramResult LoadProgram(ProgramId pid, Bytes bytes, EventIndex event) override;
  ProgramResult RunProgram(ProgramId pid, EventIndex event) override;
  void UnloadProgram(ProgramId pid) override;

  AllocatorStats GetStats() const override;
  void ClearStats() override {
    num_allocs_ = 0;
    peak_in_use_ = in_use_;
    largest_alloc_ = Bytes();
  }
  int64_t BytesInUse() const override { return static_cast<int64_t>(in_use_.value()); }
  void AppendCounters(Counters& out) const override;
  const TpuCounters& counters() const { return counters_; }
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  // The runtime manages the whole HBM: every byte of it is the runtime's.
  Bytes ReservedBytes() const override { return options_.hbm_bytes; }
  // padding, program_reservation, queued_free, gap, open_space (tpu_inspect.cc).
  ReservedCause CauseOf(const BlockContext& c) const override;
  static constexpr std::string_view kReservedCauses[] = {"padding", "program_reservation", "queued_free",
                                                         "gap", "open_space"};
  std::span<const std::string_view> ReservedCauses() const override { return kReservedCauses; }
  absl::Status CheckInvariants() const override;

  // Compacts now, as rung 2 would (also what bench/tpu times). Returns the
  // number of buffers moved.
  int64_t Defragment();

  // For reports and the allocation dump: largest first, then by address.
  std::vector<TpuBufferInfo> LiveBuffers() const;
  std::vector<TpuProgramInfo> ResidentPrograms() const;  // by address
  // Snapshots kept at failures while log_allocations_on_oom is on.
  const std::vector<TpuOomSnapshot>& oom_snapshots() const { return oom_snapshots_; }
  std::vector<TpuOomSnapshot> TakeOomSnapshots();

 private:
  // A buffer record, filed under its block's Ref: a held block keeps its Ref
  // until released, compaction included, so the handle can carry the Ref and
  // a lookup is one index and one compare (a hash map of handles cost about
  // a fifth of an allocate-free pair). Size, address and whether the free is
  // queued are the block's.
  //
  //   handle = serial << 32 | Ref      serial: 1, 2, 3, ... (unique below 2^32 allocations)
  //   buffers_[Ref].handle == handle   while the buffer lives; kVacant after
  //
  // The serial keeps a late CompleteFree unambiguous: a released handle
  // never matches the record of a later buffer in the same block.
  struct Buffer {
    uint64_t handle = kVacant;
    BufferId id;
    StreamId stream;
    Bytes requested;
  };
  static constexpr uint64_t kVacant = ~uint64_t{0};  // kNullHandle's value: never issued
  static uint64_t HandleFor(uint64_t serial, HbmLayout::Ref r) { return serial << 32 | r; }
  static HbmLayout::Ref RefOf(uint64_t handle) { return static_cast<HbmLayout::Ref>(handle); }
  // The live buffer's block, or kNone for a handle released or never issued.
  HbmLayout::Ref Find(Handle h) const {
    const HbmLayout::Ref r = RefOf(h.value());
    return r < buffers_.size() && buffers_[r].handle == h.value() ? r : HbmLayout::kNone;
  }
  struct Program {
    Bytes size;
    bool resident = false;
    Offset offset;  // programs are fixed: compaction never moves them
    HbmLayout::Ref block = HbmLayout::kNone;
    uint64_t last_use = 0;  // logical clock of the last load or run
  };
  // A hypothetical state the ladder could reach (for largest-request numbers).
  struct Reach {
    bool complete_queued_frees = false;
    bool evict_programs = false;
    bool compact = false;
  };

  // The allocation ladder (tpu_allocator.cc).
  std::optional<HbmLayout::Ref> TryPlace(Bytes size);
  bool CompleteQueuedFrees();
  bool CompactIfItMayHelp(Bytes size);
  std::optional<HbmLayout::Ref> EvictProgramsUntilFits(Bytes size);
  AllocResult Succeed(const AllocRequest& req, HbmLayout::Ref block, Bytes size);
  AllocResult Fail(const AllocRequest& req, Bytes size);
  void ReleaseBuffer(HbmLayout::Ref block);

  // Programs (tpu_programs.cc).
  ProgramResult PlaceProgram(ProgramId pid, Program& p, EventIndex event, bool reload);
  std::optional<ProgramId> NextEvictionVictim(std::optional<ProgramId> keep) const;
  void Evict(ProgramId pid);
  bool IsEvictable(ProgramId pid) const;
  ProgramResult ProgramFailure(ProgramId pid, const Program& p, EventIndex event);

  // What CheckInvariants recounts from the blocks (tpu_invariants.cc).
  struct Recount {
    Bytes held, queued, reserved, padding;
    size_t buffer_blocks = 0, queued_blocks = 0, program_blocks = 0;
  };
  absl::Status CheckHeldBlock(const HbmLayout::Block& block, Recount& n) const;

  // Layout questions (tpu_inspect.cc).
  Bytes FreeAfterLadder() const;
  Bytes LargestReachable(const Reach& reach) const;
  Bytes LargestRequestNow() const;
  Bytes ReservableLimit() const;
  // Where the free block a program load grows into starts: the end of the
  // highest resident program, 0 when none (CauseOf's open space).
  Offset ReservableStart() const;
  void RecordSnapshot(EventIndex event, bool program_load, uint64_t id, Bytes rounded);

  TpuOptions options_;
  HbmLayout layout_;
  std::vector<Buffer> buffers_;  // by block Ref (see Buffer); never iterated for a decision
  size_t live_buffers_ = 0;
  // The shapes of live buffers allocated with one (most traces carry none), by handle.
  absl::flat_hash_map<uint64_t, TensorShape> shapes_;
  // Handles with a queued deallocation.
  absl::btree_set<uint64_t, std::less<uint64_t>, RecyclingAllocator<uint64_t>> queued_;
  absl::btree_map<ProgramId, Program> programs_;   // loaded (resident or evicted)
  absl::btree_map<uint64_t, ProgramId> resident_;  // by offset
  std::optional<ProgramId> last_run_;
  uint64_t next_serial_ = 1;  // the next handle's serial (see Buffer)
  uint64_t clock_ = 0;

  int64_t num_allocs_ = 0;
  Bytes in_use_;  // buffers, queued frees included
  Bytes queued_bytes_;
  Bytes peak_in_use_;
  Bytes largest_alloc_;
  Bytes reserved_;
  Bytes peak_reserved_;
  Bytes padding_in_use_;
  TpuCounters counters_;
  std::vector<TpuOomSnapshot> oom_snapshots_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_TPU_ALLOCATOR_H_
