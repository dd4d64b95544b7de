// The 21 BFC bins: an index of the free chunks by size class. TF's BFC
// allocator defined them; every policy that needs "the least (size, address)
// free block >= n" uses them (bfc's chunks, torch's pools, tpu's layout,
// cuda_async's blocks, the baselines' free ranges), hence allocator/core.
//
//   bin b holds free chunks with   256·2^b <= size < 256·2^(b+1)    (b < 20)
//   bin 20 holds every free chunk  with size >= 256 MiB
//   inside a bin: ordered by (size ascending, address ascending)
//
// The bins are only an index: because they partition the sizes, "the first
// chunk >= rounded in bins BinNumForSize(rounded)..20" is the global minimum
// of (size, address) over free chunks >= rounded, which is TSL's best fit.
// A bitmask of non-empty bins lets the search skip empty bins in one step.
//
// TSL keeps each bin in a std::set. Replays showed bins of one or two
// entries on average (coalescing keeps free chunks few), where a tree pays
// a node and a rebalance per insert and erase. So a bin is a short list of
// sorted blocks instead, found by their top (largest) keys. Entries run from
// the largest down: the smallest, which a best fit takes most (always, from
// a bin above the request's), is the last one, taken without a shift.
//
//   bin:     tops   [ k10 | k7 | k2 ]    the largest (size, address) per block
//            blocks [ b0  | b1 | b2 ]    pointers to the blocks
//   b0: k10 k9 k8 . .   b1: k7 .. k3 .   b2: k2 k1 k0 . . .
//
//   1 <= entries of a block <= kBlockEntries (an empty bin keeps one empty
//   block, never returned to the spares);
//   tops[i] == the first entry of blocks[i] (while the bin has several);
//   every entry of blocks[i] > every entry of blocks[i+1].
//
// A small bin is one block: a sorted array, searched and shifted in place. A
// large one (a badly fragmented trace) stays O(log n + kBlockEntries) per
// operation, plus a shift of the block list when a block splits or empties.
// The order, and so every placement, is exactly the std::set's.
#ifndef HBMSIM_ALLOCATOR_CORE_BINS_H_
#define HBMSIM_ALLOCATOR_CORE_BINS_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

inline constexpr int kNumBins = 21;
inline constexpr uint64_t kMinAllocationSize = 256;  // TSL's 1 << kMinAllocationBits
// Every request and region is a multiple of it.
inline constexpr uint64_t kGranule = kMinAllocationSize;

// TSL's BinNumForSize: min(20, floor(log2(max(bytes, 256) >> 8))).
inline int BinNumForSize(Bytes bytes) {
  const uint64_t granules = (bytes.value() < kMinAllocationSize ? kMinAllocationSize : bytes.value()) >> 8;
  const int log2 = 63 - __builtin_clzll(granules);  // granules >= 1
  return log2 < kNumBins - 1 ? log2 : kNumBins - 1;
}
// TSL's BinNumToSize: 256 << bin.
Bytes BinSize(int bin);

// A free chunk as the bins see it.
struct FreeEntry {
  uint64_t size;
  uint64_t ptr;
  uint64_t handle;
};

// TSL's bin comparator: size, then address. Addresses of free chunks are
// distinct, so no two entries are equivalent.
inline bool SizeThenAddress(uint64_t a_size, uint64_t a_ptr, uint64_t b_size, uint64_t b_ptr) {
  return a_size != b_size ? a_size < b_size : a_ptr < b_ptr;
}
// The same order as one 128-bit number, which compares without a branch.
inline unsigned __int128 Key128(uint64_t size, uint64_t ptr) {
  return (static_cast<unsigned __int128>(size) << 64) | ptr;
}
inline bool operator<(const FreeEntry& a, const FreeEntry& b) {
  return SizeThenAddress(a.size, a.ptr, b.size, b.ptr);
}

class BinIndex {
 public:
  static constexpr uint32_t kBlockEntries = 32;

  // `may_crowd`: where nearly every placement splits its block (cuda_async)
  // the bins may hold 3-4 entries on average, up to ~14 on the churn (BFC's:
  // 1 or 2). A crowded index searches and shifts blocks of up to kMidRun
  // entries over a fixed kMidRun slots, where a sparse one uses 4 and 3: on
  // the churn the counts straddle 4, and the test against it mispredicted at
  // most operations. But on a training trace one bin holds ~6.5 entries, up
  // to 23, straddling 8 instead. So such an index samples the counts it
  // inserts at and takes, every kModeSamples inserts, the mode whose test
  // goes one way more often. The order of the entries is the same either way.
  explicit BinIndex(bool may_crowd = false);
  BinIndex(const BinIndex&) = delete;
  BinIndex& operator=(const BinIndex&) = delete;

  // Files a free chunk in bin `b`. A bin of one block (nearly all of them)
  // is handled here, inline; more blocks go out of line.
  void Insert(int b, const FreeEntry& e) {
    Bin& bin = bins_[b];
    if (bin.blocks.size() != 1 || bin.head->count == kBlockEntries) [[unlikely]] {
      InsertSlow(b, e);
      return;
    }
    if (may_crowd_) Sample(bin.head->count);
    InsertInto(*bin.head, e);
    nonempty_ |= uint32_t{1} << b;
    ++entries_;
  }
  // Removes the entry of (size, ptr) from bin `b`; it must be there.
  void Remove(int b, uint64_t size, uint64_t ptr) {
    const Bin& bin = bins_[b];
    const size_t i = bin.blocks.size() == 1 ? 0 : BlockFor(bin, size, ptr);
    TakeAt(b, i, CountAbove</*or_equal=*/false>(*bin.blocks[i], Key128(size, ptr)));
  }
  // The entry of (size, ptr) in bin `b`, or nullptr.
  const FreeEntry* Find(int b, uint64_t size, uint64_t ptr) const;

  // Removes and returns the free chunk with the least (size, address) among
  // those of size >= rounded (TSL's best fit), or nullopt.
  std::optional<FreeEntry> TakeBestFit(Bytes rounded) {
    const int first = BinNumForSize(rounded);
    // Only the first bin can hold chunks smaller than `rounded`: search it
    // by key; every chunk of a higher non-empty bin is large enough, so its
    // smallest entry is the answer. (An empty home bin is one empty block:
    // the search finds nothing.)
    const Bin& home = bins_[first];
    if (home.blocks.size() == 1) [[likely]] {
      // The entries >= (rounded, 0) come first; the last of them fits best.
      const uint32_t fits = CountAbove</*or_equal=*/true>(*home.head, Key128(rounded.value(), 0));
      if (fits > 0) return TakeAt(first, 0, fits - 1);
    } else if (std::optional<FreeEntry> e = TakeBestFitFromBlocks(first, rounded)) {
      return e;
    }
    const uint32_t higher = nonempty_ & ~((uint32_t{2} << first) - 1);
    if (higher == 0) return std::nullopt;
    const int b = std::countr_zero(higher);
    const Bin& bin = bins_[b];
    return TakeAt(b, bin.blocks.size() - 1, bin.blocks.back()->count - 1);  // its smallest
  }
  // The entry with the least (size, address) >= (size, ptr), left in place: a
  // lower_bound, for callers that judge a candidate before taking it or walk
  // the order (torch's pools; the successor of e is LowerBound(e.size, e.ptr + 1)).
  std::optional<FreeEntry> LowerBound(uint64_t size, uint64_t ptr) const;
  // Empties every bin, keeping the blocks for reuse (no heap traffic once warm).
  void Clear();
  // The largest free chunk (the last entry of the highest non-empty bin).
  std::optional<FreeEntry> Largest() const;

  // Calls f(entry) for every entry of bin `b`, in (size, address) order.
  template <typename F>
  void ForEach(int b, F f) const {
    const std::vector<Block*>& blocks = bins_[b].blocks;
    for (auto k = blocks.rbegin(); k != blocks.rend(); ++k) {
      for (uint32_t i = (*k)->count; i-- > 0;) f((*k)->entries[i]);
    }
  }
  bool empty(int b) const { return ((nonempty_ >> b) & 1) == 0; }
  uint32_t nonempty_mask() const { return nonempty_; }
  uint64_t size() const { return entries_; }
  // Host bytes of the blocks and block lists (grows with the number of free
  // chunks only).
  uint64_t footprint_bytes() const;
  // The layout rules above, for every bin; the first broken one, described.
  absl::Status CheckInvariants() const;

 private:
  struct Key {
    uint64_t size;
    uint64_t ptr;
  };
  struct Block {
    uint32_t count = 0;
    FreeEntry entries[kBlockEntries];
  };
  struct Bin {
    Block* head = nullptr;       // blocks[0]: a one-block bin needs no more
    std::vector<Block*> blocks;  // largest keys first; never empty
    std::vector<Key> tops;       // first (largest) key of each block, kept while blocks.size() > 1
  };

  // How many entries of `k` are above `key` (or not below it): they come
  // first, so this is also where `key` sits or would go. Branch-free: the
  // comparisons depend on the trace's sizes, which no branch predictor
  // guesses. A block of up to kLinearSearch entries (nearly all) counts over
  // a fixed kLinearSearch slots, stale ones masked; a loop over the count
  // would exit at a count-dependent, so mispredicted, trip. Larger blocks
  // halve with conditional moves. (A crowded index: kMidRun slots.)
  static constexpr uint32_t kLinearSearch = 4;
  template <bool or_equal>
  uint32_t CountAbove(const Block& k, unsigned __int128 key) const {
    return crowded_ ? CountAboveIn<or_equal, kMidRun>(k, key) : CountAboveIn<or_equal, kLinearSearch>(k, key);
  }
  template <bool or_equal, uint32_t kSlots>
  static uint32_t CountAboveIn(const Block& k, unsigned __int128 key) {
    const auto above = [key](const FreeEntry& e) {
      const unsigned __int128 x = Key128(e.size, e.ptr);
      return or_equal ? x >= key : x > key;
    };
    if (k.count <= kSlots) [[likely]] {
      uint32_t count = 0;
#pragma GCC unroll 8
      for (uint32_t j = 0; j < kSlots; ++j) {
        count += static_cast<uint32_t>(j < k.count) & static_cast<uint32_t>(above(k.entries[j]));
      }
      return count;
    }
    const FreeEntry* base = k.entries;
    for (uint32_t n = k.count; n > 1;) {
      const uint32_t half = n / 2;
      base = above(base[half]) ? base + half : base;
      n -= half;
    }
    return static_cast<uint32_t>(base - k.entries) + (above(*base) ? 1 : 0);
  }

  // Shifts in a block of a few entries move a fixed kShortRun entries
  // whatever the count (stale ones past the end included): no branch on a
  // count no predictor knows, and no memmove call (GCC calls libc even for
  // this fixed size).
  static constexpr uint32_t kShortRun = 3;
  static void MoveShortRun(FreeEntry* to, const FreeEntry* from) {
    const FreeEntry a = from[0], b = from[1], c = from[2];
    to[0] = a;
    to[1] = b;
    to[2] = c;
  }
  // A crowded index's blocks of up to kMidRun entries move a fixed kMidRun
  // (inlined moves, where memmove's dispatch on the size mispredicted at
  // most calls). Out of line, so that a sparse index's callers keep their
  // code as it was.
  static constexpr uint32_t kMidRun = 8;
  static_assert(2 * kMidRun < kBlockEntries);
  [[gnu::noinline]] static void MoveMidRun(FreeEntry* to, const FreeEntry* from) {
    FreeEntry run[kMidRun];
    std::memcpy(run, from, sizeof(run));
    std::memcpy(to, run, sizeof(run));
  }

  // Files `e` in a block with room; returns its position.
  uint32_t InsertInto(Block& k, const FreeEntry& e) const {
    const uint32_t at = CountAbove</*or_equal=*/false>(k, Key128(e.size, e.ptr));
    if (k.count <= (crowded_ ? kMidRun : kShortRun)) [[likely]] {
      if (crowded_) {
        MoveMidRun(&k.entries[at + 1], &k.entries[at]);
      } else {
        MoveShortRun(&k.entries[at + 1], &k.entries[at]);
      }
    } else {
      std::memmove(&k.entries[at + 1], &k.entries[at], (k.count - at) * sizeof(FreeEntry));
    }
    k.entries[at] = e;
    ++k.count;
    return at;
  }
  // Removes entry `at` of block `i` of bin `b` and returns it.
  FreeEntry TakeAt(int b, size_t i, uint32_t at) {
    Bin& bin = bins_[b];
    Block& k = *bin.blocks[i];
    const FreeEntry taken = k.entries[at];
    --k.count;
    if (crowded_ ? k.count <= kMidRun : k.count < kShortRun) [[likely]] {
      if (crowded_) {
        MoveMidRun(&k.entries[at], &k.entries[at + 1]);
      } else {
        MoveShortRun(&k.entries[at], &k.entries[at + 1]);
      }
    } else if (at < k.count) {
      std::memmove(&k.entries[at], &k.entries[at + 1], (k.count - at) * sizeof(FreeEntry));
    }
    --entries_;
    if (bin.blocks.size() == 1) [[likely]] {
      // Branch-free: whether the bin emptied depends on the trace.
      nonempty_ &= ~(uint32_t{k.count == 0} << b);
      return taken;
    }
    if (k.count == 0) {
      DropBlock(bin, i);
    } else if (at == 0) {
      bin.tops[i] = Key{k.entries[0].size, k.entries[0].ptr};
    }
    return taken;
  }

  // The block of a bin of several blocks that holds (or would hold) (size,
  // ptr): the last one whose top is not below it, or block 0.
  static size_t BlockFor(const Bin& bin, uint64_t size, uint64_t ptr);
  [[gnu::noinline]] std::optional<FreeEntry> TakeBestFitFromBlocks(int b, Bytes rounded);
  [[gnu::noinline]] void InsertSlow(int b, const FreeEntry& e);
  Block* NewBlock();
  void SplitBlock(Bin& bin, size_t i);
  // Block i of a bin of several blocks became empty: back to the spares.
  [[gnu::noinline]] void DropBlock(Bin& bin, size_t i);

  std::array<Bin, kNumBins> bins_;
  std::vector<std::unique_ptr<Block>> blocks_;  // every block; addresses stay put
  std::vector<Block*> spare_blocks_;            // blocks in no bin
  // The mode (see the constructor) and the counts sampled for the next choice.
  static constexpr uint32_t kModeSamples = 4096;
  void Sample(uint32_t count) {
    at_most_4_ += count <= kLinearSearch ? 1 : 0;
    at_most_8_ += count <= kMidRun ? 1 : 0;
    if (++samples_ == kModeSamples) [[unlikely]] ChooseMode();
  }
  [[gnu::noinline]] void ChooseMode();
  bool may_crowd_;
  bool crowded_ = false;
  uint32_t samples_ = 0;
  uint32_t at_most_4_ = 0;
  uint32_t at_most_8_ = 0;
  uint32_t nonempty_ = 0;                       // bit b set iff bin b is not empty
  uint64_t entries_ = 0;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_BINS_H_
