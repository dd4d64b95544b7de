// The `cuda_async` policy: CUDA's stream-ordered memory pool (cudaMallocAsync /
// cudaFreeAsync on a device's default pool), as TensorFlow and XLA use it under
// TF_GPU_ALLOCATOR=cuda_malloc_async (GpuCudaMallocAsyncAllocator). The driver's
// code is closed: docs/cuda-async-model.md lists every documented rule ("DOC
// §n" below: the CUDA Programming Guide's stream-ordered allocator chapter and
// the runtime API's pool attributes), the TF wrapper's settings ("TF") and each
// assumption we made where the record is silent ("ASSUME").
//
// Model
// -----
// The pool reserves virtual address (VA) ranges and maps physical memory behind
// them in granules. A buffer takes a VA piece; the granules it touches must be
// mapped. Physical granules are fungible: a granule no held block touches can
// be unmapped and mapped again anywhere (DOC §4: the driver "defragments the
// pool by remapping unused memory ... to a contiguous portion" of VA).
//
//   VA range 0 (va_range bytes)                          VA range 1
//   |g0      |g1      |g2      |g3      |g4      |...    |g0      |
//   [ A in use ][free ][ B queued(s1) ][   free    ][unmapped ...] [ C  ...
//   [=========== mapped =================][ cached ]
//   held granules H = granules touched by in-use or queued blocks
//
// Rules:
//   rounding   r = alignment·ceil(n/alignment) (ASSUME 256); 0 bytes: null handle
//   reuse      before mapping more, reuse freed memory (DOC §3): best fit
//              (size, address) among eligible free blocks, the buffer at the
//              block's low end (ASSUME), provided the granules it needs beyond
//              those mapped fit under the limit
//   eligible   `free`: every stream (the trace says reusable at once);
//              `free_requested` on stream s: stream s only (same-stream reuse,
//              DOC §3); `free_completed`: every stream when `opportunistic`
//              (cudaMemPoolReuseAllowOpportunistic, DOC §3.2), else still s only
//   new range  no eligible block fits: reserve a VA range of max(va_range,
//              granule·ceil(r/granule)) and map the granules r needs
//   remap      mapping would pass the limit: unmap cached granules (mapped,
//              untouched by held blocks and by the placement), highest address
//              first, and map where the buffer goes. Fits iff
//                 |H ∪ granules(X)| <= P = floor(limit / granule)
//              for the best-fitting free block X, or a new range
//   internal   still no fit and `internal_dependencies` (cudaMemPoolReuseAllow-
//   deps       InternalDependencies, DOC §3.3): best fit among blocks queued on
//              other streams (the driver makes this stream wait for theirs)
//   release    at each completed free (`free`, `free_completed`: the host saw
//              the work end, i.e. synchronized; ASSUME), while mapped·granule >
//              release_threshold, unmap cached granules: the freed block's first,
//              then the highest addresses (DOC §4.2). A range with no held block
//              and nothing mapped is given back. TF sets the threshold to the
//              pool size (TF), so by default nothing is released
//   preallocate TF_CUDA_MALLOC_ASYNC_SUPPORTED_PREALLOC / reserve_memory (TF):
//              one range of P granules, all mapped, at construction
//   failure    none of the above: free_bytes = P·granule − Σ blocks the request
//              may not use; largest_free_block = the largest request the same
//              ladder would serve now (exact: all candidates are tried)
//
// Policy events: mapping granules is kRegionExtended / kRegionPagesMapped,
// unmapping them kRegionReleased / kRegionPagesUnmapped, one event per
// contiguous run inside one VA range, on stream 0 (the pool is every
// stream's). Reserving or giving back VA is no event: it holds no memory, as
// PyTorch reports its expandable segments (segment_map / segment_unmap only).
// The memory map shows each range as an expandable region whose unmapped
// granules are kUnmapped blocks, so its segments are the mapped runs.
//
// Layout: each block is a record (blocks_, named by index) linked prev/next
// in address order inside its range, so a free finds its neighbours and the
// memory map walks a range without any search by address. Free blocks are in
// BFC's bin index (its search is exactly the least (size, address) >= a
// size); handles name records. Per range, per granule from its base: how many
// held blocks touch it and whether it is mapped, plus a mapped prefix:
//
//   range  [ #4 in use | #9 free | #2 queued | #7 free ...................... ]
//   links    #4 <-> #9 <-> #2 <-> #7               (first = #4, at the base)
//   held     [ 1 | 2 | 1 | 0 | 0 ... ]   per granule (|H| = non-zero count)
//   mapped   [ 1 | 1 | 1 | 1 | 0 ... ]   prefix 4: granules [0, 4) mapped
//
// Invariants (CheckInvariants):
//   blocks tile every VA range (CheckMemoryMapTiling); ranges are granule sized
//   the records linked from a range's first one are its blocks, in order
//   every address and size          ≡ 0 (mod alignment)
//   no two neighbouring free blocks of one range (eager coalescing)
//   free_index == { free blocks };  queued_index[s] == { queued blocks of s }
//   granules touched by held blocks are mapped;  mapped granules lie in ranges
//   per range: held counts, mapped flags (unless fully mapped), the mapped
//   prefix and the mapped count agree with the blocks and with mapped_
//   no range holds nothing and maps nothing (it would have been given back)
//   mapped <= P;  bytes_in_use == Σ held block sizes (in use + queued)
//   handles map exactly to the in-use and queued blocks that carry them
//
// Stats: bytes_in_use = Σ held block sizes (rounded; TF's own stats count the
// requested bytes); pool_bytes = mapped·granule (cudaMemPoolAttrReservedMem-
// Current; its peak ReservedMemHigh); bytes_limit = limit.
//
// Limit windows (allocator/core/limit_window.h, for `size`): the limit shows
// only as P. Every rule above that reads it compares P with a count of
// granules (the request, mapped + what a placement maps, |H| + what a remap
// costs), so the window narrows to the limits on the same side of k·granule
// (P >= k iff limit >= k·granule, below the 64 PiB cap). A remap unmaps a
// number of granules that depends on P itself: from there the window is the
// limits with this P. Until then a run at another limit of the window holds
// the same state but for P (CloneAt). Not with preallocate (the pool is P
// granules from the start).
//
// Not modelled: event dependencies between streams (a trace records no CUDA
// events; cudaMemPoolReuseFollowEventDependencies has nothing to follow), IPC
// pools, more than one pool, the driver's real VA layout (placements are ours).
#ifndef HBMSIM_ALLOCATOR_CUDA_ASYNC_CUDA_ASYNC_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_CUDA_ASYNC_CUDA_ASYNC_ALLOCATOR_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "allocator/core/bins.h"
#include "allocator/core/allocator.h"
#include "allocator/core/device.h"
#include "allocator/core/handle_table.h"
#include "allocator/core/limit_window.h"
#include "allocator/cuda_async/mapped_granules.h"

namespace hbmsim::allocator {

struct CudaAsyncOptions {
  Bytes memory_limit;                         // the physical memory the pool may map
  uint64_t granule = uint64_t{2} << 20;       // a multiple of alignment
  uint64_t alignment = 256;                   // > 0
  uint64_t va_range = uint64_t{2} << 30;      // rounded up to a granule multiple
  uint64_t release_threshold = ~uint64_t{0};  // TF: the pool size; CUDA's default: 0
  bool opportunistic = true;                  // CUDA default; TF_DETERMINISTIC_ALLOCATOR: false
  bool internal_dependencies = true;          // CUDA default; TF_DETERMINISTIC_ALLOCATOR: false
  bool preallocate = false;                   // map the whole limit at construction
};

class CudaAsyncAllocator final : public Allocator, public LimitWindowPolicy {
 public:
  static constexpr uint64_t kMaxPhysicalBytes = uint64_t{1} << 56;

  // Requires granule % alignment == 0 (the registry checks it).
  explicit CudaAsyncAllocator(const CudaAsyncOptions& options);

  std::string_view name() const override { return "cuda_async"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  void RequestFree(Handle h) override;
  void CompleteFree(Handle h) override;

  AllocatorStats GetStats() const override;
  void ClearStats() override {
    stats_.bytes_in_use = static_cast<int64_t>(held_bytes_);
    stats_.Clear();
  }
  int64_t BytesInUse() const override { return static_cast<int64_t>(held_bytes_); }
  // va_ranges, granules_mapped, peak_granules_mapped, granules_remapped,
  // granules_released, ranges_released, same_stream_reuses,
  // internal_dependency_reuses.
  void AppendCounters(Counters& out) const override;
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  Bytes ReservedBytes() const override { return Bytes(mapped_.count() * options_.granule); }
  // A free mapped granule is the pool's, kept until a trim at a synchronization.
  ReservedCause CauseOf(const BlockContext& c) const override {
    if (c.block.state == BlockState::kFree) return {"pool_free", ""};
    return GenericCause(c);  // in use or queued: no programs here
  }
  static constexpr std::string_view kReservedCauses[] = {"rounding", "pending_free", "pool_free"};
  std::span<const std::string_view> ReservedCauses() const override { return kReservedCauses; }
  absl::Status CheckInvariants() const override;

  uint64_t physical_granules() const { return physical_granules_; }
  const cuda_async::MappedGranules& mapped() const { return mapped_; }

  // Limit windows (cuda_async_windows.cc); no fingerprint: runs never reconverge.
  bool TrackLimitWindow() override;
  LimitWindow limit_window() const override { return window_.all; }
  std::unique_ptr<Allocator> CloneAt(Bytes limit) const override;

 private:
  CudaAsyncAllocator(const CudaAsyncAllocator& from, Bytes limit);  // CloneAt
  enum class Kind : uint8_t { kFree, kInUse, kQueued };
  static constexpr uint32_t kNone = ~uint32_t{0};  // no block
  // A reserved VA range. Map nodes stay put, so blocks point at theirs.
  struct Range {
    uint64_t base = 0;
    uint64_t size = 0;
    uint32_t first = kNone;  // the block at base: carving keeps the low end's
                             // record, coalescing the lower one's, so it stays
    uint64_t mapped = 0;     // granules of the range that are mapped
    // Per granule from base: held blocks touching it (|H| counts the non-zero
    // ones), and whether it is mapped (mirrors mapped_, so a placement's cost
    // is a scan of its few granules, not a search of the runs). Both grow on
    // demand up to the highest granule held or mapped; past that: 0. While
    // every granule is mapped (`mapped` == size / granule) is_mapped is unread.
    std::vector<uint32_t> held;
    std::vector<uint8_t> is_mapped;
    // Granules [0, mapped_prefix) are all mapped. Blocks are placed at low
    // ends, so a range is mapped from its base up: most placements fall
    // inside the prefix and cost one comparison.
    uint64_t mapped_prefix = 0;
  };
  // A block is a record in blocks_, named by its index (the free index, the
  // handles and the neighbour links hold indexes, so nothing is looked up by
  // address on the hot paths). Records are recycled through spare_blocks_.
  struct Block {
    uint64_t address = 0;
    uint64_t size = 0;
    Range* range = nullptr;
    uint32_t prev = kNone;  // neighbours in address order inside the range
    uint32_t next = kNone;
    Kind kind = Kind::kFree;
    bool completed = false;  // queued: its free_completed arrived
    uint64_t stream = 0;
    uint64_t id = 0;
    uint64_t requested = 0;
    uint64_t handle = kNoHandle;  // in-use and queued blocks of a buffer
  };
  // Queued blocks of one stream, in best-fit order (size, address).
  struct QueuedKey {
    uint64_t size;
    uint64_t address;
    uint32_t block;
    auto operator<=>(const QueuedKey&) const = default;
  };
  using QueuedIndex = std::set<QueuedKey>;
  // Where a request goes: a block (at its low end) or, with none, a new range.
  // `taken`: the block is a free one the search already took out of the free
  // index (carving must not remove it again).
  struct Placement {
    uint32_t block = kNone;
    bool taken = false;
  };
  // The request being served, for the eligibility rules.
  struct Want {
    uint64_t rounded = 0;
    std::optional<uint64_t> stream;  // none: a stream with no queued frees (stats)
    bool any_queued = false;         // internal dependencies: every queued block
  };

  // The ladder (cuda_async_allocator.cc).
  std::optional<Placement> FindReuse(const Want& w);
  std::optional<Placement> FindWithRemap(const Want& w, uint64_t* unmap);
  std::optional<Placement> FindQueued(const Want& w, bool other_streams) const;
  AllocResult Place(const Placement& p, const AllocRequest& req, uint64_t rounded);
  AllocResult Fail(const Want& w) const;

  // Blocks and ranges (cuda_async_blocks.cc).
  uint32_t ReserveRange(uint64_t rounded);  // the new range's one free block
  uint32_t NewBlock();                      // may grow blocks_: no references across it
  void DropBlock(uint32_t id);
  void Carve(uint32_t id, uint64_t rounded, const AllocRequest& req, bool indexed);
  uint32_t MakeFree(uint32_t id);  // the merged free block
  void Index(uint32_t id);
  void Unindex(uint32_t id);
  void FileFree(uint32_t id, uint64_t address, uint64_t size) {
    free_index_.Insert(allocator::BinNumForSize(Bytes(size)), {size, address, id});
  }
  void UnfileFree(uint64_t address, uint64_t size) {
    free_index_.Remove(allocator::BinNumForSize(Bytes(size)), size, address);
  }
  // Takes free blocks out of the free index in best-fit order (size, address)
  // until `fits` accepts one, which stays out; the ones passed over go back.
  template <typename Fits>
  std::optional<allocator::FreeEntry> TakeFree(uint64_t rounded, Fits fits);
  void PutBack(const allocator::FreeEntry& e) {
    free_index_.Insert(allocator::BinNumForSize(Bytes(e.size)), e);
  }
  void AddHeld(uint32_t id);  // the block becomes in use or queued
  void RemoveHeld(uint32_t id);

  // Granules (cuda_async_granules.cc).
  // The granules [first, last) of range r that [begin, end) touches.
  uint64_t FirstGranule(const Range& r, uint64_t begin) const { return mapped_.Number(begin - r.base); }
  uint64_t EndGranule(const Range& r, uint64_t end) const {
    return mapped_.Number(end - r.base + options_.granule - 1);
  }
  uint64_t NeedToMap(const Range& r, uint64_t begin, uint64_t size) const;  // unmapped granules of [begin, +size)
  // Every granule [begin, end) touches is mapped, known without a scan: the
  // range is fully mapped or they lie in its mapped prefix (nearly every
  // reuse; checked inline before calling NeedToMap or MapGranules).
  bool SurelyMapped(const Range& r, uint64_t begin, uint64_t end) const {
    return r.mapped * options_.granule == r.size || EndGranule(r, end) <= r.mapped_prefix;
  }
  uint64_t HeldGranules() const { return held_granules_; }                  // |H|
  bool Held(const Range& r, uint64_t granule_start) const;  // does a held block touch it?
  bool Held(uint64_t granule_start) const;                  // the same, for a mapped granule
  uint64_t RemapCost(const Block& b, uint64_t size) const;  // |granules(X) \ H|, X at b's low end
  uint64_t LargestAt(const Block& b, uint64_t budget) const;
  uint64_t LargestRequest(const Want& w) const;
  void MapGranules(Range& r, uint64_t begin, uint64_t end);  // granule aligned; notifies each new run
  void UnmapGranules(std::vector<uint64_t> granules);        // notifies each run, split at ranges
  void UnmapCached(uint64_t count, uint64_t keep_begin, uint64_t keep_end);
  void ReleaseAfterFree(uint32_t id);
  void DropEmptyRanges();
  void NoteMapped() {
    peak_granules_mapped_ = std::max(peak_granules_mapped_, mapped_.count());
    stats_.pool_bytes = static_cast<int64_t>(mapped_.count() * options_.granule);
    stats_.peak_pool_bytes = static_cast<int64_t>(peak_granules_mapped_ * options_.granule);
  }

  absl::Status CheckBlocks() const;
  // CheckBlocks' steps: what one range's walk finds is added to a tally,
  // which is then held against the indexes and counters.
  struct BlockTally;
  absl::Status CheckRangeMapping(uint64_t base, const Range& range) const;
  absl::Status CheckRangeBlocks(uint64_t base, const Range& range, BlockTally& tally) const;
  absl::Status CheckBlock(const Block& b, uint32_t id, BlockTally& tally) const;
  absl::Status CheckTally(const BlockTally& tally) const;

  // The window's bookkeeping (only while windows_): a rule found P >= k
  // granules (at_least) or P < k; a remap made the state P's own.
  void PSays(bool at_least, uint64_t k) {
    if (windows_) [[unlikely]]
      NarrowTo(at_least, k);
  }
  void NarrowTo(bool at_least, uint64_t k);
  void OnlyThisP();

  CudaAsyncOptions options_;
  uint64_t physical_granules_;  // P
  uint64_t release_keep_;       // release_threshold in whole granules
  SimulatedDevice device_;
  std::map<uint64_t, Range> ranges_;  // base -> range
  std::vector<Block> blocks_;
  std::vector<uint32_t> spare_blocks_;  // records of no block
  // Free blocks by (size, address), FreeEntry::handle = the block: BFC's bin
  // index, whose search is exactly the least (size, address) >= a size.
  // May crowd: every placement at a free block splits it.
  allocator::BinIndex free_index_{/*may_crowd=*/true};
  std::map<uint64_t, QueuedIndex> queued_index_;     // stream -> queued blocks
  // handle -> block; homed at the handle itself, as handles are consecutive
  // (a hash map's random slots cost ~12% of a churn replay)
  HandleTable handles_;
  uint64_t next_handle_ = 0;
  cuda_async::MappedGranules mapped_;
  uint64_t held_granules_ = 0;  // |H|: granules some held block touches
  uint64_t held_bytes_ = 0;
  // Only unmapping can leave a range with nothing held and nothing mapped,
  // so DropEmptyRanges looks at the ranges only after one.
  bool unmapped_since_drop_ = false;
  AllocatorStats stats_;
  uint64_t peak_granules_mapped_ = 0;
  int64_t granules_remapped_ = 0;
  int64_t granules_released_ = 0;
  int64_t ranges_released_ = 0;
  int64_t same_stream_reuses_ = 0;
  int64_t internal_dependency_reuses_ = 0;
  int64_t ranges_reserved_ = 0;
  bool windows_ = false;  // TrackLimitWindow() was asked and accepted
  LimitWindows window_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CUDA_ASYNC_CUDA_ASYNC_ALLOCATOR_H_
