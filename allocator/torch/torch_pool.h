// The free blocks of one PyTorch BlockPool (small or large), in the order of
// BlockComparatorSize: (stream, size, address).
//
//   streams_:  [ stream 0 | stream 7 | ... ]   ascending, found by a linear scan
//                  │           │               (a trace has a handful of streams)
//                  ▼           ▼
//              BinIndex    BinIndex            allocator/core/bins.h, one per stream:
//                                              entries (size, address, block)
//
// PyTorch keeps a pool in one std::set, and the model kept it in one
// absl::btree_set of (stream, size, address): every malloc paid a lower_bound
// and an erase, every free an insert and up to two erases (merged
// neighbours), ~230 instructions each and a quarter of all mispredicted
// branches of a churn replay. get_free_block's lower_bound on (stream, size,
// 0) is, within one stream, exactly the least (size, address) >= (size, 0),
// which BFC's bin index answers (TakeBestFit, LowerBound) from a bitmask and
// a sorted block of a few entries. The walks PyTorch does over the set (the
// release steps, GC, stats) are done in the same order: streams ascending,
// then each stream's entries by (size, address).
//
// Expandable blocks are ranked differently by get_free_block (by the size
// they could grow to), so it must walk past the first candidate; the pool
// counts them so that a pool without any takes the one-step path.
#ifndef HBMSIM_ALLOCATOR_TORCH_TORCH_POOL_H_
#define HBMSIM_ALLOCATOR_TORCH_TORCH_POOL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "allocator/core/bins.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator::torch {

// A free block as the pool sees it; `handle` of the bin entry is the block's index.
using PoolEntry = allocator::FreeEntry;

class FreePool {
 public:
  FreePool() = default;
  // The allocator is copied (sim/inspect's probes try a request on a copy); a
  // BinIndex is not copyable (its bins point into its own blocks), so a copy
  // refiles every entry.
  FreePool(const FreePool& other) { *this = other; }
  FreePool& operator=(const FreePool& other);
  FreePool(FreePool&&) = default;
  FreePool& operator=(FreePool&&) = default;

  void Insert(uint64_t stream, uint64_t size, uint64_t addr, uint32_t block, bool expandable) {
    Bins(stream).Insert(allocator::BinNumForSize(Bytes(size)), PoolEntry{size, addr, block});
    expandable_ += expandable ? 1 : 0;
  }
  // The entry must be there (the callers erase only blocks they know are pooled).
  void Remove(uint64_t stream, uint64_t size, uint64_t addr, bool expandable);
  // Removes and returns the least (size, address) >= (rounded, 0) on `stream`.
  std::optional<PoolEntry> TakeBestFit(uint64_t stream, Bytes rounded) {
    allocator::BinIndex* bins = Find(stream);
    if (bins == nullptr) return std::nullopt;
    return bins->TakeBestFit(rounded);
  }
  // The least entry >= (size, addr) on `stream`, left in place.
  std::optional<PoolEntry> LowerBound(uint64_t stream, uint64_t size, uint64_t addr) const {
    const allocator::BinIndex* bins = Find(stream);
    if (bins == nullptr) return std::nullopt;
    return bins->LowerBound(size, addr);
  }
  // Every entry of `stream`, ascending.
  std::vector<PoolEntry> StreamEntries(uint64_t stream) const;
  // Calls f(stream, entry) for every entry in (stream, size, address) order.
  // f must not change the pool (collect, then act).
  template <typename F>
  void ForEach(F f) const {
    for (const StreamBins& s : streams_) {
      for (int b = 0; b < allocator::kNumBins; ++b) {
        if (!s.bins->empty(b)) s.bins->ForEach(b, [&](const PoolEntry& e) { f(s.stream, e); });
      }
    }
  }
  // Free expandable blocks in the pool (any stream).
  uint64_t expandable_entries() const { return expandable_; }
  uint64_t size() const;
  // Every stream's bin index keeps its own layout rules (the caller checks the
  // entries against the blocks).
  absl::Status CheckInvariants() const;

 private:
  struct StreamBins {
    uint64_t stream;
    std::unique_ptr<allocator::BinIndex> bins;  // BinIndex does not move
  };
  allocator::BinIndex* Find(uint64_t stream) const {
    for (const StreamBins& s : streams_) {
      if (s.stream == stream) return s.bins.get();
    }
    return nullptr;
  }
  // The stream's index, made on its first free block (and kept when it empties).
  allocator::BinIndex& Bins(uint64_t stream) {
    if (!streams_.empty() && streams_.front().stream == stream) [[likely]] {
      return *streams_.front().bins;
    }
    return AddStream(stream);
  }
  allocator::BinIndex& AddStream(uint64_t stream);

  std::vector<StreamBins> streams_;  // ascending by stream
  uint64_t expandable_ = 0;
};

}  // namespace hbmsim::allocator::torch

#endif  // HBMSIM_ALLOCATOR_TORCH_TORCH_POOL_H_
