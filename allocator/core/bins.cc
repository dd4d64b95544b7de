#include "allocator/core/bins.h"

#include <algorithm>
#include <bit>

#include "fmt/format.h"

namespace hbmsim::allocator {

Bytes BinSize(int bin) { return Bytes(kMinAllocationSize << bin); }

BinIndex::BinIndex(bool may_crowd) : may_crowd_(may_crowd) {
  // Every bin keeps a block for life, so a bin that keeps going from empty to
  // one entry and back (the common case) never touches the spares.
  for (Bin& bin : bins_) {
    bin.head = NewBlock();
    bin.blocks.push_back(bin.head);
  }
}

size_t BinIndex::BlockFor(const Bin& bin, uint64_t size, uint64_t ptr) {
  if (bin.blocks.size() == 1) return 0;
  // Tops descend: those not below the key are a prefix; take its last.
  const unsigned __int128 key = Key128(size, ptr);
  const auto past = std::partition_point(bin.tops.begin(), bin.tops.end(),
                                         [key](const Key& top) { return Key128(top.size, top.ptr) >= key; });
  return past == bin.tops.begin() ? 0 : static_cast<size_t>(past - bin.tops.begin()) - 1;
}

BinIndex::Block* BinIndex::NewBlock() {
  if (!spare_blocks_.empty()) {
    Block* k = spare_blocks_.back();
    spare_blocks_.pop_back();
    k->count = 0;
    return k;
  }
  blocks_.push_back(std::make_unique<Block>());
  return blocks_.back().get();
}

// Moves the upper half of a full block i into a new block i+1.
void BinIndex::SplitBlock(Bin& bin, size_t i) {
  if (bin.blocks.size() == 1) {  // the tops start to matter now
    bin.tops.assign(1, Key{bin.head->entries[0].size, bin.head->entries[0].ptr});
  }
  Block& full = *bin.blocks[i];
  Block& upper = *NewBlock();
  const uint32_t keep = full.count / 2;
  upper.count = full.count - keep;
  std::copy(full.entries + keep, full.entries + full.count, upper.entries);
  full.count = keep;
  bin.blocks.insert(bin.blocks.begin() + static_cast<ptrdiff_t>(i) + 1, &upper);
  bin.tops.insert(bin.tops.begin() + static_cast<ptrdiff_t>(i) + 1,
                  Key{upper.entries[0].size, upper.entries[0].ptr});
}

// A bin of several blocks, or whose only block is full.
void BinIndex::InsertSlow(int b, const FreeEntry& e) {
  Bin& bin = bins_[b];
  size_t i = BlockFor(bin, e.size, e.ptr);
  if (bin.blocks[i]->count == kBlockEntries) {
    SplitBlock(bin, i);
    // Below the new block's top: it goes there.
    if (SizeThenAddress(e.size, e.ptr, bin.tops[i + 1].size, bin.tops[i + 1].ptr)) ++i;
  }
  if (InsertInto(*bin.blocks[i], e) == 0) bin.tops[i] = Key{e.size, e.ptr};
  nonempty_ |= uint32_t{1} << b;
  ++entries_;
}

// The crowded mode must win clearly (by 1/16 of the samples): it costs a
// few instructions more per operation than the sparse one.
void BinIndex::ChooseMode() {
  const uint32_t straddle4 = std::min(at_most_4_, kModeSamples - at_most_4_);
  const uint32_t straddle8 = std::min(at_most_8_, kModeSamples - at_most_8_);
  crowded_ = straddle8 + kModeSamples / 16 < straddle4;
  samples_ = at_most_4_ = at_most_8_ = 0;
}

std::optional<FreeEntry> BinIndex::TakeBestFitFromBlocks(int b, Bytes rounded) {
  // The last block whose top is not below (rounded, 0) holds the smallest
  // entry that is not: every later block lies below.
  const Bin& bin = bins_[b];
  const size_t i = BlockFor(bin, rounded.value(), 0);
  const uint32_t fits = CountAbove</*or_equal=*/true>(*bin.blocks[i], Key128(rounded.value(), 0));
  if (fits == 0) return std::nullopt;
  return TakeAt(b, i, fits - 1);
}

void BinIndex::DropBlock(Bin& bin, size_t i) {
  spare_blocks_.push_back(bin.blocks[i]);
  bin.blocks.erase(bin.blocks.begin() + static_cast<ptrdiff_t>(i));
  bin.tops.erase(bin.tops.begin() + static_cast<ptrdiff_t>(i));
  bin.head = bin.blocks.front();
}

const FreeEntry* BinIndex::Find(int b, uint64_t size, uint64_t ptr) const {
  const Bin& bin = bins_[b];
  const Block& k = *bin.blocks[BlockFor(bin, size, ptr)];
  const uint32_t at = CountAbove</*or_equal=*/false>(k, Key128(size, ptr));
  if (at == k.count || k.entries[at].size != size || k.entries[at].ptr != ptr) return nullptr;
  return &k.entries[at];
}

std::optional<FreeEntry> BinIndex::LowerBound(uint64_t size, uint64_t ptr) const {
  // As TakeBestFit: only the home bin can hold entries below the key; if its
  // chosen block has none at or above it, the answer is the smallest entry
  // of the next non-empty bin.
  const int first = BinNumForSize(Bytes(size));
  const Bin& home = bins_[first];
  const Block& k = *home.blocks[BlockFor(home, size, ptr)];
  const uint32_t fits = CountAbove</*or_equal=*/true>(k, Key128(size, ptr));
  if (fits > 0) return k.entries[fits - 1];
  const uint32_t higher = nonempty_ & ~((uint32_t{2} << first) - 1);
  if (higher == 0) return std::nullopt;
  const Block& smallest = *bins_[std::countr_zero(higher)].blocks.back();
  return smallest.entries[smallest.count - 1];
}

void BinIndex::Clear() {
  for (Bin& bin : bins_) {
    for (size_t i = 1; i < bin.blocks.size(); ++i) spare_blocks_.push_back(bin.blocks[i]);
    bin.blocks.resize(1);
    bin.head = bin.blocks[0];
    bin.head->count = 0;
    bin.tops.clear();
  }
  nonempty_ = 0;
  entries_ = 0;
}

std::optional<FreeEntry> BinIndex::Largest() const {
  if (nonempty_ == 0) return std::nullopt;
  return bins_[std::bit_width(nonempty_) - 1].head->entries[0];
}

uint64_t BinIndex::footprint_bytes() const {
  uint64_t bytes = blocks_.size() * sizeof(Block) + blocks_.capacity() * sizeof(blocks_[0]) +
                   spare_blocks_.capacity() * sizeof(Block*);
  for (const Bin& bin : bins_) {
    bytes += bin.tops.capacity() * sizeof(Key) + bin.blocks.capacity() * sizeof(Block*);
  }
  return bytes;
}

absl::Status BinIndex::CheckInvariants() const {
  uint64_t entries = 0;
  for (int b = 0; b < kNumBins; ++b) {
    const Bin& bin = bins_[b];
    if (bin.blocks.empty() || bin.head != bin.blocks.front()) {
      return absl::InternalError(fmt::format("bin {} lost its head block", b));
    }
    const bool several = bin.blocks.size() > 1;
    if (several && bin.tops.size() != bin.blocks.size()) {
      return absl::InternalError(
          fmt::format("bin {}: {} tops for {} blocks", b, bin.tops.size(), bin.blocks.size()));
    }
    const bool is_empty = !several && bin.head->count == 0;
    if (((nonempty_ >> b) & 1) == is_empty) {
      return absl::InternalError(fmt::format("bin {} mask is stale", b));
    }
    if (is_empty) continue;
    const FreeEntry* last = nullptr;
    for (size_t i = 0; i < bin.blocks.size(); ++i) {
      const Block& k = *bin.blocks[i];
      if (k.count == 0 || k.count > kBlockEntries) {
        return absl::InternalError(fmt::format("bin {} block {} holds {} entries", b, i, k.count));
      }
      if (several && (bin.tops[i].size != k.entries[0].size || bin.tops[i].ptr != k.entries[0].ptr)) {
        return absl::InternalError(fmt::format("bin {} block {} has a stale top", b, i));
      }
      for (uint32_t j = 0; j < k.count; ++j) {
        const FreeEntry& e = k.entries[j];
        if (BinNumForSize(Bytes(e.size)) != b) {
          return absl::InternalError(fmt::format("bin {} holds an entry of size {}", b, e.size));
        }
        if (last != nullptr && !(e < *last)) {  // strictly descending
          return absl::InternalError(
              fmt::format("bin {} is out of (size, address) order at ({}, {})", b, e.size, e.ptr));
        }
        last = &e;
      }
      entries += k.count;
    }
  }
  if (entries != entries_) {
    return absl::InternalError(fmt::format("bins hold {} entries but count {}", entries, entries_));
  }
  return absl::OkStatus();
}

}  // namespace hbmsim::allocator
