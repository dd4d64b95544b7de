// The 21 BFC bins: an index of the free chunks by size class.
//
//   bin b holds free chunks with   256·2^b <= size < 256·2^(b+1)    (b < 20)
//   bin 20 holds every free chunk  with size >= 256 MiB
//   inside a bin: ordered by (size ascending, address ascending)
//
// The bins are only an index: because they partition the sizes, "the first
// chunk >= rounded in bins BinNumForSize(rounded)..20" is the global minimum
// of (size, address) over free chunks >= rounded, which is TSL's best fit.
// A bitmask of non-empty bins lets the search skip empty bins in one step.
#ifndef HBMSIM_ALLOCATOR_BFC_BINS_H_
#define HBMSIM_ALLOCATOR_BFC_BINS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>

#include "allocator/bfc/node_pool.h"
#include "allocator/core/units.h"

namespace hbmsim::bfc {

inline constexpr int kNumBins = 21;
inline constexpr uint64_t kMinAllocationSize = 256;  // TSL's 1 << kMinAllocationBits

// TSL's BinNumForSize: min(20, floor(log2(max(bytes, 256) >> 8))).
int BinNumForSize(Bytes bytes);
// TSL's BinNumToSize: 256 << bin.
Bytes BinSize(int bin);

// A free chunk as the bins see it.
struct FreeEntry {
  uint64_t size;
  uint64_t ptr;
  uint64_t handle;
};

struct SizeThenAddress {
  bool operator()(const FreeEntry& a, const FreeEntry& b) const {
    return a.size != b.size ? a.size < b.size : a.ptr < b.ptr;
  }
};

class BinIndex {
 public:
  using Set = std::set<FreeEntry, SizeThenAddress, PoolAllocator<FreeEntry>>;
  // Stored in the chunk so removal needs no search.
  using Position = Set::iterator;

  BinIndex();
  BinIndex(const BinIndex&) = delete;
  BinIndex& operator=(const BinIndex&) = delete;

  // Files a free chunk in bin `bin`; returns its position for Remove().
  Position Insert(int bin, const FreeEntry& e);
  void Remove(int bin, Position pos);

  // The free chunk with the least (size, address) among those of size >=
  // rounded, or nullopt. The chunk stays in its bin.
  std::optional<FreeEntry> BestFit(Bytes rounded) const;
  // The largest free chunk (the last entry of the highest non-empty bin).
  std::optional<FreeEntry> Largest() const;

  const Set& bin(int b) const { return bins_[b]; }
  uint32_t nonempty_mask() const { return nonempty_; }
  uint64_t size() const { return entries_; }
  // Host bytes of the bin nodes (grows with the number of free chunks only).
  uint64_t footprint_bytes() const { return pool_->footprint_bytes(); }

 private:
  // Declared first so it outlives the sets that return nodes to it.
  std::unique_ptr<NodePool> pool_;
  std::array<Set, kNumBins> bins_;
  uint32_t nonempty_ = 0;  // bit b set iff bins_[b] is not empty
  uint64_t entries_ = 0;
};

}  // namespace hbmsim::bfc

#endif  // HBMSIM_ALLOCATOR_BFC_BINS_H_
