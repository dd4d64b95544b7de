// The `bfc` policy: TensorFlow/XLA's BFCAllocator ("best-fit with coalescing"),
// placement- and stats-identical to google/tsl tsl/framework/bfc_allocator.cc
// (2024, the last revision before the move to xla/tsl; "REF" in
// the project's bfc-allocator.md reference notes, whose sections are cited below).
//
// Model
// -----
// The allocator holds regions of device memory obtained from the device (a
// "sub-allocator" in TSL) and cuts them into chunks. Every chunk is free or in
// use; free chunks are indexed by 21 bins of size classes.
//
//   region (one per Extend; or grown in place when region_coalescing is on)
//   base                                                         base+size
//   ┌────────────┬──────────┬──────┬──────────────┬──────────────────────┐
//   │ h0 in use  │ h3 free  │h1 use│   h4 in use  │       h2 free        │
//   └────────────┴──────────┴──────┴──────────────┴──────────────────────┘
//     prev/next links run along the region; next of the last chunk = SIZE_MAX
//
//   bins (free chunks only; ordered by (size, address) inside a bin)
//   bin 0  [256, 512)      ...
//   bin 3  [2 KiB, 4 KiB)  { h3 }
//   bin 20 [256 MiB, ∞)    { h2 }
//
// Invariants (CheckInvariants verifies every one):
//   chunks tile each region:      Σ chunk.size over a region == region.size
//   pool_bytes                  == Σ region.size
//   bytes_in_use                == Σ size of in-use chunks;  num live == count
//   free chunk c                ∈ bin BinNumForSize(c.size), exactly once
//   bins hold no in-use chunk;  no two adjacent chunks are both free
//   released handles            ∩ live handles == ∅
//   every size, address         ≡ 0 (mod 256)
//   pool_bytes                  <= floor256(limit), and <= device_capacity if set
//
// Rules copied from REF:
//   rounding   rounded = 256·ceil(n/256), saturating (an absurd n fails as oom);  §1.1
//              0 bytes: a null handle, nothing changes
//   best fit   min (size, address) over free chunks with size >= rounded        §1.3
//   placement  the allocated part is the low end of the chosen chunk            §1.3
//   split      iff size >= 2·rounded or size - rounded >= max_internal_frag     §1.4
//              (128 MiB, or (int64)(fragmentation_fraction·limit) if > 0);
//              the remainder is binned, not coalesced
//   free       merge next into h, then h into prev                              §1.5
//   handles    vector indices, recycled LIFO; in one free next's handle is      §1.6
//              released before h's; a split takes its new handle first
//   growth     curr starts at RoundedBytes(min(limit, first_region)) with       §1.7
//              growth (2 MiB), else RoundedBytes(limit). Extend: available = floor256(limit -
//              pool); double curr while rounded > curr; take min(curr,
//              available); double curr after success only if not doubled before
//   coalescing with region_coalescing, memory that starts where a region ends  §1.6
//              extends it and merges with its free last chunk
//   backpedal  only with device_capacity: a refused Extend retries with         §1.7
//              RoundedBytes((float)bytes · 0.9f) until it fits or drops below
//              rounded (on every Extend, or once per lifetime: backpedal_once)
//   GC         release every fully free region when rounded <= limit - pool +   §1.9
//              Σ free region sizes, then Extend and find again
//   stats      chunk sizes, as TF (§2); largest_free_block_bytes is ours (REF   §2
//              leaves it 0): the largest request that would succeed right now
//   recorded   ours: under --check-recorded new memory starts at the request's
//              recorded address (the request lands there: see ChooseBase), so a
//              faithful replay reproduces real addresses; never used inside
//              memory already held
//
// Allocation is the ladder FindChunk → Extend → GarbageCollect (→ Extend →
// FindChunk) → fail; TF's retry loop adds nothing in a replay (see Allocate).
//
// Not modelled: timestamped frees (§1.8, off by default), HEAD's alignment and
// spatial partitioning (§1.12), sub-allocators that round sizes up.
#ifndef HBMSIM_ALLOCATOR_BFC_BFC_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BFC_BFC_ALLOCATOR_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/bins.h"
#include "allocator/bfc/chunks.h"
#include "allocator/core/allocator.h"
#include "allocator/core/device.h"
#include "allocator/core/limit_window.h"

namespace hbmsim::allocator {

struct BfcOptions {
  Bytes memory_limit;                 // TSL's total_memory / memory_limit_
  bool allow_growth = false;          // start with first_region instead of the whole limit
  // allow_growth's first region: REF's 2 MiB. TF 1.x-2.1 used 1 MiB (reference
  // §1.7), and so did the builds behind the shared TF profiles of 2022-2023
  // (their pools are an odd number of MiB: docs/formats/xplane.md).
  Bytes first_region = Bytes::MiB(2);
  bool garbage_collection = false;    // release fully free regions before failing (TF GPU: true)
  bool region_coalescing = false;     // the sub-allocator grows a region in place (TSL's VMM; TF's GPU: off)
  double fragmentation_fraction = 0;  // > 0: split threshold = fraction · limit
  // Optional: the most the device can hand this allocator in total (TF: the
  // free device memory, which may be less than the limit). When an Extend
  // asks for more, the sub-allocator fails and REF backpedals (§1.7).
  std::optional<Bytes> device_capacity;
  // Releases cut before 2024-02 (TF <= ~2.15) backpedal only once per lifetime.
  bool backpedal_once = false;
};

// Limit windows (allocator/core/limit_window.h), when asked for, are kept for the options
// `size` meets most: with or without growth and garbage collection, but no
// device capacity and no fragmentation_fraction. Garbage collection without
// growth never collects (GarbageCollect); with growth, a run keeps its window
// until a collection runs (or its decision depends on the limit-sized region
// being free), and its limit alone from there (NoteCollect). The limit then sizes one
// stretch of memory only: the region whose Extend the limit cut short (without
// growth the first and only one, floor256(limit); with growth the first whose
// curr_region_allocation_bytes did not fit below the limit, limit - pool,
// after which every Extend fails under every limit of the window). Before it
// exists a window narrows only where an Extend compares the limit with the
// pool; after, only where the length of that region's free last chunk (the
// tail) is compared: by a best fit, a split, or a tail handed out whole,
// which keeps its limit-sized length in use (and in the in-use stats and
// their peaks, kept as fixed + floor256(limit) parts for CloneAt).
//
//   pool:  [ region | region | ... | region cut by the limit ........ tail ]
//          0                        P                                 floor256(limit)
//   the tail's length = limit_origin_ + floor256(limit) - tail.ptr,
//   limit_origin_ = (base of the cut region's memory) - P
//
// Other options: the window is the limit alone.
class BfcAllocator final : public Allocator, public LimitWindowPolicy {
 public:
  static constexpr int kNumBins = allocator::kNumBins;
  static int BinNumForSize(Bytes bytes) { return allocator::BinNumForSize(bytes); }
  static Bytes BinSize(int bin) { return allocator::BinSize(bin); }

  explicit BfcAllocator(const BfcOptions& options);
  BfcAllocator& operator=(const BfcAllocator&) = delete;

  std::string_view name() const override { return "bfc"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;

  AllocatorStats GetStats() const override;
  void ClearStats() override;
  int64_t BytesInUse() const override { return stats_.bytes_in_use; }
  // regions, extends, region_extensions, garbage_collections, regions_released,
  // device_alloc_failures (refused sub-allocator calls, backpedal steps included).
  void AppendCounters(Counters& out) const override;
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  Bytes ReservedBytes() const override { return pool_bytes_; }
  // A free chunk by its bin, or the free tail of a region (bfc_inspect.cc).
  // No queued frees: a live chunk is in use, its rounding the only other part.
  ReservedCause CauseOf(const BlockContext& c) const override;
  static constexpr std::string_view kReservedCauses[] = {"rounding", "free_chunk", "region_tail"};
  std::span<const std::string_view> ReservedCauses() const override { return kReservedCauses; }
  absl::Status CheckInvariants() const override;

  // What a TF dump prints besides the walk (DumpMemoryLog's pool line). Note
  // REF's dump prints "LargestFreeBlock: 0"; GetStats() fills our own number.
  const BfcOptions& options() const { return options_; }
  Bytes memory_limit() const { return options_.memory_limit; }
  Bytes curr_region_allocation_bytes() const { return curr_region_allocation_bytes_; }
  Bytes pool_bytes() const { return pool_bytes_; }
  // The split threshold for a remainder, as REF computes it.
  Bytes max_internal_fragmentation_bytes() const { return max_internal_fragmentation_; }

  // Host memory the allocator itself holds; depends on the number of chunks
  // and regions ever alive, never on the limit.
  uint64_t chunk_records() const { return chunks_.records(); }
  uint64_t host_footprint_bytes() const;

  bool TrackLimitWindow() override;
  LimitWindow limit_window() const override { return window_.all; }
  std::unique_ptr<Allocator> CloneAt(Bytes limit) const override;
  // While windows_: every chunk in address order (its address, its length but
  // for the tail's, its buffer while in use), if there are at most max_work
  // of them; else nullopt.
  std::optional<StateFingerprint> Fingerprint(uint64_t max_work) const override;
  LimitWindow TakeRecentWindow() override {
    return window_pinned_ ? LimitWindow{options_.memory_limit, options_.memory_limit} : window_.TakeRecent();
  }

 private:
  BfcAllocator(const BfcAllocator& from, Bytes limit);  // CloneAt
  struct Region {
    Offset base;
    Bytes size;
    bfc::ChunkHandle first;  // the chunk at `base`; never changes while the region lives
  };

  // The allocation ladder.
  std::optional<bfc::ChunkHandle> FindChunk(Bytes rounded, const AllocRequest& req);
  bool Extend(Bytes rounded, const AllocRequest& req);
  bool GarbageCollect(Bytes rounded);
  void NoteCollect(Bytes rounded, Bytes free_region_bytes, bool declines);
  // From here on the run's window is its limit alone, and no longer tracked.
  void PinWindow();
  AllocResult Fail(Bytes rounded) const;
  Bytes ComputeMaxInternalFragmentation() const;
  // The window's bookkeeping (only while windows_): the tail's length as the
  // limits that keep it in [a, b] bytes.
  void TailWithin(Bytes a, Bytes b);
  void NoteFit(Bytes rounded, const std::optional<allocator::FreeEntry>& fit);

  // Chunk surgery.
  void SplitChunk(bfc::ChunkHandle h, Bytes rounded);
  void MarkInUse(bfc::ChunkHandle h, const AllocRequest& req);
  bfc::ChunkHandle Coalesce(bfc::ChunkHandle h);
  void Merge(bfc::ChunkHandle left, bfc::ChunkHandle right);
  void InsertIntoBin(bfc::ChunkHandle h);
  void RemoveFromBin(bfc::ChunkHandle h);

  // Regions.
  Offset ChooseBase(Bytes size, const AllocRequest& req);
  std::optional<Offset> RecordedBase(Offset recorded, Bytes size) const;
  const Region* OverlappingRegion(Offset base, Bytes size) const;
  void AddRegionMemory(Offset base, Bytes size, bool sized_by_limit);
  Region* RegionEndingAt(Offset end);
  bfc::ChunkHandle LastChunkOf(const Region& r) const;
  bool RegionIsFree(const Region& r) const;
  Bytes FreeRegionBytes() const;
  Bytes Available() const;  // floor256(limit - pool): what Extend may still take
  Bytes LargestRequest() const;
  Bytes Obtainable() const;  // what Extend could still get, device capacity included

  // The device capacity and backpedalling (bfc_backpedal.cc).
  bool DeviceCanServe(Bytes pool, Bytes bytes) const;
  std::optional<Bytes> NegotiateWithDevice(Bytes bytes, Bytes rounded);
  // Without side effects: would Allocate (or Extend alone) serve `rounded`?
  bool WouldSucceed(Bytes rounded, bool extend_only) const;
  Bytes LargestRequestUnderCapacity(bool extend_only) const;

  absl::Status CheckChunks() const;
  // CheckChunks' steps: a free chunk's neighbour, bin and entry; the released handles.
  absl::Status CheckFreeChunk(bfc::ChunkHandle h, bfc::ChunkHandle prev, const bfc::Chunk& c) const;
  absl::Status CheckReleasedHandles(std::vector<bool>& reached) const;
  absl::Status CheckBins() const;

  BfcOptions options_;
  SimulatedDevice device_;
  bfc::ChunkStore chunks_;
  allocator::BinIndex bins_;
  std::vector<Region> regions_;  // address order
  Bytes max_internal_fragmentation_;
  Bytes curr_region_allocation_bytes_;
  Bytes pool_bytes_;
  int64_t next_allocation_id_ = 1;
  AllocatorStats stats_;
  int64_t live_chunks_ = 0;
  int64_t extends_ = 0;
  int64_t region_extensions_ = 0;
  int64_t garbage_collections_ = 0;
  int64_t regions_released_ = 0;
  bool started_backpedal_ = false;
  int64_t device_alloc_failures_ = 0;
  bool windows_ = false;  // TrackLimitWindow() was asked, with the options above: the window is tracked
  bool window_pinned_ = false;  // a collection ran under windows: the window is the limit alone (PinWindow)
  LimitWindows window_;
  // While windows_: the last chunk of the memory the limit sized (the tail;
  // invalid until that memory exists), and where that memory would start were
  // the pool before it empty (see the picture above).
  bfc::ChunkHandle last_ = bfc::kInvalidChunk;
  uint64_t limit_origin_ = 0;
  // While windows_: peak_bytes_in_use = max(peak_fixed_, floor256(limit) + peak_rel_),
  // largest_alloc_size likewise (the _rel_ parts come from times the tail was in use).
  int64_t peak_fixed_ = 0;
  int64_t largest_fixed_ = 0;
  std::optional<int64_t> peak_rel_;
  std::optional<int64_t> largest_rel_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BFC_BFC_ALLOCATOR_H_
