// The `torch` policy: PyTorch's native CUDA caching allocator (backend:native),
// one DeviceCachingAllocator, exact enough to reproduce recorded addresses.
//
// Model (c10/cuda/CUDACachingAllocator.cpp; reference doc §1)
// -----
// A request of n bytes is rounded (RoundSize: 512 B, or a power-of-two division)
// and served by the small pool (rounded <= 1 MiB) or the large pool. Each pool
// holds only FREE blocks, ordered by (stream, size, address): get_free_block is a
// lower_bound, i.e. best fit on the request's own stream, lowest address on ties,
// subject to the oversize rules (max_split_size, max_non_split_rounding). A miss
// walks the failure ladder:
//   garbage_collect (threshold + fraction) → alloc_block (fraction check, then
//   cudaMalloc = capacity check) → release_available_cached_blocks (only with
//   max_split_size) + alloc_block → release_cached_blocks (sync pending frees,
//   cudaFree every unsplit free segment) + alloc_block(isRetry) → OOM.
// New segments are 2 MiB (small), large_segment_size (1–10 MiB requests) or the
// request rounded up to 2 MiB. The allocated block always takes the FRONT of the
// block it came from; the remainder goes back to the pool if should_split says so.
// Segments are returned to the device only by the release steps, never on free.
//
//   segment (one cudaMalloc)          prev/next chain, addresses increase →
//   base ┌───────────┬──────────┬─────────────────┬──────────┐ base+size
//        │ allocated │   free   │  pending free   │   free   │
//        └───────────┴──────────┴─────────────────┴──────────┘
//          active      in pool     active, not in    in pool
//                      (stream,    pool (free_requested
//                      size,addr)  without free_completed)
//
// Expandable segments: a (stream, pool) reserves a VA range of ceil(1.125 ×
// capacity / page) pages (at most 2^48 bytes: torch_windows.cc) when no range
// it holds has room, and maps pages (2 MiB
// small, large_segment_size large) on demand; blocks split at 512 B; unmapped
// space is a block in the pool's `unmapped` set (kUnmapped in WalkMemoryMap);
// release_cached_blocks unmaps whole free pages and drops an empty range.
//
// Invariants (CheckInvariants):
//   blocks tile every segment (CheckMemoryMapTiling) and the prev/next chain agrees;
//   no two neighbouring blocks are both free-and-mapped, or both unmapped;
//   pool(small|large).blocks == { free mapped blocks of that pool }   (per stream key)
//   pool.unmapped == { unmapped blocks of that pool }
//   allocated_bytes = Σ allocated block sizes;  active_bytes = allocated + pending
//   requested_bytes = Σ requested of active blocks
//   reserved_bytes = Σ non-expandable segment sizes + Σ mapped expandable bytes
//   inactive_split_bytes = Σ free blocks of split non-expandable segments
//
// AllocatorStats mapping:
//   bytes_in_use      = active_bytes.all.current (allocated + pending free)
//   peak_bytes_in_use = active_bytes.all.peak
//   pool_bytes        = reserved_bytes.all.current (peak_pool_bytes its peak)
//   bytes_limit       = capacity (unset when unlimited); bytes_reserved = 0
//   largest_free_block_bytes = max(largest free mapped block (any stream; a
//     small-pool block counts at most 1 MiB, the largest request it can serve),
//     the largest request a new segment could hold with headroom = limit −
//     reserved + releasable, where limit = min(capacity, allowed) and releasable =
//     unsplit free non-expandable segments + whole free pages of expandable free
//     blocks: floor(headroom, 2 MiB) when >= 10 MiB, else 1 MiB when >= 2 MiB;
//     with expandable segments, floor(headroom, page) and a free block followed by
//     unmapped space extended by up to that many pages). Pending frees count as held.
//   On failure: free_bytes = limit − bytes_in_use, largest_free_block as above,
//   measured after the ladder ran.
//
// Addresses: a new segment starts at AllocRequest::recorded_address when one is
// given (the allocated block takes the front of a fresh segment, so the recorded
// alloc address IS the recorded segment base) and that range is not held;
// otherwise at the SimulatedDevice's next range. For expandable segments the
// recorded address is used only when a NEW VA range is reserved (the block lands at
// its start), clipped so it ends before the next range we hold; and when the
// recorded base lies in the unmapped tail of a range we hold, that range is
// trimmed to end there (real VA ranges never overlap). Growth inside an existing
// range keeps the range's own addresses.
#ifndef HBMSIM_ALLOCATOR_TORCH_TORCH_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_TORCH_TORCH_ALLOCATOR_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "allocator/core/device.h"
#include "allocator/core/limit_window.h"
#include "allocator/core/handle_table.h"
#include "allocator/torch/torch_messages.h"
#include "allocator/torch/torch_options.h"
#include "allocator/torch/torch_pool.h"
#include "allocator/torch/torch_stats.h"

namespace hbmsim::allocator::torch {

// PolicyEvent::detail values, in PyTorch's trace words (allocator/core/allocator.h).
inline constexpr uint64_t kDetailSegment = kRegionWhole;        // segment_alloc / segment_free
inline constexpr uint64_t kDetailMap = kRegionPagesMapped;      // segment_map
inline constexpr uint64_t kDetailUnmap = kRegionPagesUnmapped;  // segment_unmap

// A segment that existed before the trace starts (rebuilt from a snapshot).
struct SeedBlock {
  Bytes size;
  Bytes requested;                       // ignored for free blocks
  BlockState state = BlockState::kFree;  // kFree, kInUse or kPendingFree
  BufferId id;
};
struct SegmentSeed {
  Offset base;
  Bytes size;
  StreamId stream;
  bool expandable = false;
  // The snapshot's segment_type ("small"); unset: small iff a non-expandable
  // segment is exactly kSmallBuffer (large segments are >= 10 MiB), or an
  // expandable range is smaller than large_segment_size.
  std::optional<bool> small_pool;
  std::vector<SeedBlock> blocks;  // tile the segment in address order
};

// Limit windows (allocator/core/limit_window.h), when asked for, are kept without
// per_process_memory_fraction (and so without garbage collection): the
// capacity is consulted by cudaMalloc's and cuMemCreate's `reserved + size <=
// capacity`, and with expandable segments it sizes the VA ranges, so their
// tails and bases (torch_windows.cc). Once a recorded address chose a base, the
// window is the capacity alone.
class TorchAllocator final : public Allocator, public LimitWindowPolicy {
 public:
  explicit TorchAllocator(TorchOptions options);

  bool TrackLimitWindow() override;
  LimitWindow limit_window() const override { return window_; }
  std::unique_ptr<Allocator> CloneAt(Bytes limit) const override;

  std::string_view name() const override { return "torch"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  void RequestFree(Handle h) override;
  void CompleteFree(Handle h) override;
  AllocatorStats GetStats() const override;
  void ClearStats() override {
    stats_.ResetPeaks();
    num_allocs_ = 0;
    largest_alloc_size_ = 0;
  }
  int64_t BytesInUse() const override { return stats_.active_bytes.all().current; }
  void AppendCounters(Counters& out) const override;
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  absl::Status CheckInvariants() const override;
  Bytes ReservedBytes() const override { return Bytes(static_cast<uint64_t>(stats_.reserved_bytes.all().current)); }
  // PyTorch's reasons a free block stays cached (torch_reserved.cc).
  ReservedCause CauseOf(const BlockContext& c) const override;
  static constexpr std::string_view kReservedCauses[] = {
      "rounding",       "pending_free",     "expandable_free", "expandable_partial_page",
      "inactive_split", "oversize_segment", "free_segment"};
  std::span<const std::string_view> ReservedCauses() const override { return kReservedCauses; }

  // Installs a pre-existing segment; returns the handles of its live blocks
  // (allocated and pending free) in address order. Seeded memory counts in the
  // current/peak/allocated stats but as no device call. A seeded expandable
  // segment is one mapped run of a VA range: it gets an unmapped tail up to the
  // range size (ExpandableRangeSize from its base, clipped at the next range
  // held), and a later seed of the same stream and pool inside that tail is
  // installed as a further run of the same range (torch_seed.cc).
  absl::StatusOr<std::vector<Handle>> SeedSegment(const SegmentSeed& seed);
  // torch.cuda.empty_cache(): release_cached_blocks().
  void EmptyCache();

  const TorchOptions& options() const { return options_; }
  const TorchStats& torch_stats() const { return stats_; }
  // The numbers of the last OutOfMemoryError (FormatOutOfMemoryMessage prints them).
  const std::optional<OomNumbers>& last_oom() const { return last_oom_; }

 private:
  using BlockIndex = uint32_t;
  static constexpr BlockIndex kNil = ~BlockIndex{0};
  enum class Kind : uint8_t { kFree, kAllocated, kPendingFree, kUnmapped };

  struct Block {
    Offset addr;
    Bytes size;
    Bytes requested;
    StreamId stream;
    Offset segment;  // base of the owning segment
    BlockIndex prev = kNil;
    BlockIndex next = kNil;
    Kind kind = Kind::kFree;
    bool small = false;
    bool expandable = false;
    uint64_t handle = kNoHandle;
    BufferId id;
    uint64_t gc_count_base = 0;
  };
  struct Segment {
    Offset base;
    Bytes size;  // VA bytes for expandable segments
    StreamId stream;
    bool small = false;
    bool expandable = false;
    BlockIndex head = kNil;
    // Expandable ranges the device reserved before this one, large and small
    // (torch_windows.cc: its base at another capacity).
    std::array<uint64_t, 2> ranges_before = {0, 0};
  };
  // BlockComparatorAddress: (stream, address).
  struct AddrKey {
    uint64_t stream, addr;
    BlockIndex block;
    bool operator<(const AddrKey& o) const { return stream != o.stream ? stream < o.stream : addr < o.addr; }
  };
  struct Pool {
    FreePool blocks;  // free mapped blocks by (stream, size, address): torch_pool.h
    absl::btree_set<AddrKey> unmapped;
    uint64_t get_free_blocks_call_count = 0;
  };
  struct Params {
    StreamId stream;
    Bytes requested;
    Bytes rounded;
    Bytes alloc_size;
    bool small = false;
    std::optional<Offset> recorded;
  };

  // torch_allocator.cc: the malloc flow and free.
  std::optional<BlockIndex> GetFreeBlock(const Params& p);
  bool OversizeAllows(const Params& p, Bytes size) const;
  std::optional<PoolEntry> ExpandableAwareCandidate(const Params& p);
  std::optional<BlockIndex> MissLadder(const Params& p);
  std::optional<BlockIndex> AllocBlock(const Params& p, bool is_retry);
  AllocResult AllocFoundBlock(const Params& p, BlockIndex b, const AllocRequest& req);
  AllocResult Fail(const Params& p);
  bool ShouldSplit(const Block& b, Bytes size) const;
  void MarkFreeRequested(BlockIndex b);
  void FreeBlock(BlockIndex b);
  Bytes TryMerge(BlockIndex dst, BlockIndex src);
  // torch_release.cc: giving memory back.
  void ReleaseBlock(BlockIndex b);
  bool ReleaseAvailableCachedBlocks(const Params& p);
  void ReleaseCachedBlocks();
  void ReleaseBlocks(Pool& pool);
  void SynchronizeAndFreeEvents();
  void GarbageCollectCachedBlocks();
  Offset NewSegmentBase(Bytes size, std::optional<Offset> recorded);
  bool RangeIsFree(Offset base, Bytes size) const;
  Bytes SpaceAfter(Offset base) const;  // bytes up to the next segment's base
  // torch_expandable.cc
  std::optional<BlockIndex> TryAllocateExpandable(const Params& p);
  BlockIndex FindExpandableBlock(const Params& p);
  bool MapBlock(BlockIndex b, Bytes size);
  void UnmapBlock(BlockIndex b);
  void ReleaseExpandableSegment(BlockIndex b);
  void TrimUnmappedTailAt(Offset at);
  Bytes PageSize(bool small) const;
  ReservedCause ExpandableCause(const BlockContext& c) const;  // torch_reserved.cc
  Bytes ExpandableRangeSize(bool small) const;  // ceil(1.125 × device memory / page) pages
  static Bytes RangeSizeFor(Bytes memory, Bytes page);
  // torch_windows.cc: what narrows the limit window, and CloneAt's layout.
  bool CapacityHolds(Bytes reserved, Bytes size);  // size <= capacity - reserved
  bool IsTail(BlockIndex b) const;                 // an expandable range's unmapped last block
  bool TailHolds(BlockIndex b, Bytes n);           // the tail is at least n long
  Bytes TailOrLess(BlockIndex b, Bytes n);         // min(length of b, n)
  bool GrowsLess(BlockIndex a, BlockIndex b);      // a with its unmapped successor < b with its
  Bytes LeastCapacityForRange(Bytes bytes, Bytes page) const;
  void LayOutRangesAgain(const std::array<Bytes, 2>& before);
  // torch_state.cc: storage, stats views, walk, invariants, seeding.
  BlockIndex NewBlock(const Block& b);
  void DeleteBlock(BlockIndex b);
  void InsertIntoPool(BlockIndex b);
  void EraseFromPool(BlockIndex b);
  void InsertUnmapped(BlockIndex b);
  void EraseUnmapped(BlockIndex b);
  bool IsSplit(BlockIndex b) const { return blocks_[b].prev != kNil || blocks_[b].next != kNil; }
  Pool& PoolOf(bool small) { return small ? small_ : large_; }
  const Pool& PoolOf(bool small) const { return small ? small_ : large_; }
  Bytes Limit() const;
  Bytes LargestSatisfiableRequest() const;
  uint64_t gc_count(const Block& b) const;
  bool GcEnabled() const;
  absl::Status CheckSegmentChains() const;
  absl::Status CheckPools() const;
  absl::Status CheckStatsRecount() const;
  absl::Status ValidateSeed(const SegmentSeed& seed) const;
  // torch_seed.cc
  std::optional<BlockIndex> SeedHole(const SegmentSeed& seed, bool small);
  void SeedIntoHole(BlockIndex hole, const SegmentSeed& seed, bool small, std::vector<Handle>& handles);
  void AddSeededTail(Offset base, BlockIndex last);
  BlockIndex SeedChain(const SegmentSeed& seed, bool small, Offset owner, BlockIndex prev, BlockIndex& last,
                       std::vector<Handle>& handles);
  Handle SeedLiveBlock(BlockIndex b, const SeedBlock& sb);

  TorchOptions options_;
  SimulatedDevice device_;
  std::vector<Block> blocks_;
  std::vector<BlockIndex> free_slots_;
  absl::btree_map<uint64_t, Segment> segments_;     // by base address
  HandleTable live_;                                // handle → active block (lookup only)
  std::map<uint64_t, BlockIndex> pending_;          // handle → pending-free block, in order
  Pool small_;
  Pool large_;
  TorchStats stats_;
  uint64_t next_handle_ = 1;
  int64_t num_allocs_ = 0;
  int64_t largest_alloc_size_ = 0;
  std::optional<OomNumbers> last_oom_;
  std::array<uint64_t, 2> ranges_reserved_ = {0, 0};  // expandable ranges so far: large, small
  bool windows_ = false;
  LimitWindow window_;
};

}  // namespace hbmsim::allocator::torch

#endif  // HBMSIM_ALLOCATOR_TORCH_TORCH_ALLOCATOR_H_
