#include "allocator/bfc/bins.h"

#include <bit>
#include <utility>

namespace hbmsim::bfc {
namespace {

// Builds the 21 sets, all drawing nodes from `pool`.
std::array<BinIndex::Set, kNumBins> MakeBins(NodePool* pool) {
  return [pool]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<BinIndex::Set, kNumBins>{
        ((void)I, BinIndex::Set(SizeThenAddress(), PoolAllocator<FreeEntry>(pool)))...};
  }
  (std::make_index_sequence<kNumBins>());
}

}  // namespace

int BinNumForSize(Bytes bytes) {
  const uint64_t granules = std::max(bytes.value(), kMinAllocationSize) >> 8;
  const int log2 = std::bit_width(granules) - 1;  // floor(log2), granules >= 1
  return std::min(kNumBins - 1, log2);
}

Bytes BinSize(int bin) { return Bytes(kMinAllocationSize << bin); }

BinIndex::BinIndex() : pool_(std::make_unique<NodePool>()), bins_(MakeBins(pool_.get())) {}

BinIndex::Position BinIndex::Insert(int bin, const FreeEntry& e) {
  nonempty_ |= uint32_t{1} << bin;
  ++entries_;
  return bins_[bin].insert(e).first;
}

void BinIndex::Remove(int bin, Position pos) {
  bins_[bin].erase(pos);
  --entries_;
  if (bins_[bin].empty()) nonempty_ &= ~(uint32_t{1} << bin);
}

std::optional<FreeEntry> BinIndex::BestFit(Bytes rounded) const {
  const int first = BinNumForSize(rounded);
  // Only the first bin can hold chunks smaller than `rounded`: search it by
  // key; every chunk of a higher non-empty bin is large enough, so its
  // smallest entry is the answer.
  const Set& home = bins_[first];
  auto it = home.lower_bound(FreeEntry{rounded.value(), 0, 0});
  if (it != home.end()) return *it;
  const uint32_t higher = nonempty_ & ~((uint32_t{2} << first) - 1);
  if (higher == 0) return std::nullopt;
  return *bins_[std::countr_zero(higher)].begin();
}

std::optional<FreeEntry> BinIndex::Largest() const {
  if (nonempty_ == 0) return std::nullopt;
  const int top = std::bit_width(nonempty_) - 1;
  return *bins_[top].rbegin();
}

}  // namespace hbmsim::bfc
