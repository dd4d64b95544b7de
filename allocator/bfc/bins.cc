#include "allocator/bfc/bins.h"

#include <algorithm>
#include <bit>

#include "fmt/format.h"

namespace hbmsim::bfc {

Bytes BinSize(int bin) { return Bytes(kMinAllocationSize << bin); }

BinIndex::BinIndex() {
  // Every bin keeps its first block for life, so a bin that keeps going from
  // empty to one entry and back (the common case) never touches the pool.
  pool_.resize(kNumBins);
  for (int b = 0; b < kNumBins; ++b) {
    bins_[b].blocks.push_back(static_cast<uint32_t>(b));
    bins_[b].firsts.push_back(Key{0, 0});
  }
}

size_t BinIndex::BlockFor(const Bin& bin, uint64_t size, uint64_t ptr) {
  // Nearly every bin is one block: skip the search.
  const size_t n = bin.firsts.size();
  if (n <= 1) return 0;
  const auto above = std::upper_bound(bin.firsts.begin(), bin.firsts.end(), Key{size, ptr},
                                      [](const Key& a, const Key& b) {
                                        return SizeThenAddress(a.size, a.ptr, b.size, b.ptr);
                                      });
  return above == bin.firsts.begin() ? 0 : static_cast<size_t>(above - bin.firsts.begin()) - 1;
}

uint32_t BinIndex::NewBlock() {
  if (!spare_blocks_.empty()) {
    const uint32_t b = spare_blocks_.back();
    spare_blocks_.pop_back();
    pool_[b].count = 0;
    return b;
  }
  pool_.emplace_back();
  return static_cast<uint32_t>(pool_.size() - 1);
}

// Moves the upper half of a full block i into a new block i+1.
void BinIndex::SplitBlock(Bin& bin, size_t i) {
  const uint32_t fresh = NewBlock();  // may move pool_: take references after
  Block& full = pool_[bin.blocks[i]];
  Block& upper = pool_[fresh];
  const uint32_t keep = full.count / 2;
  upper.count = full.count - keep;
  std::copy(full.entries + keep, full.entries + full.count, upper.entries);
  full.count = keep;
  bin.blocks.insert(bin.blocks.begin() + static_cast<ptrdiff_t>(i) + 1, fresh);
  bin.firsts.insert(bin.firsts.begin() + static_cast<ptrdiff_t>(i) + 1,
                    Key{upper.entries[0].size, upper.entries[0].ptr});
}

// A bin of several blocks, or whose only block is full.
void BinIndex::InsertSlow(int b, const FreeEntry& e) {
  Bin& bin = bins_[b];
  size_t i = BlockFor(bin, e.size, e.ptr);
  if (pool_[bin.blocks[i]].count == kBlockEntries) {
    SplitBlock(bin, i);
    if (!SizeThenAddress(e.size, e.ptr, bin.firsts[i + 1].size, bin.firsts[i + 1].ptr)) ++i;
  }
  if (InsertInto(pool_[bin.blocks[i]], e) == 0) bin.firsts[i] = Key{e.size, e.ptr};
  nonempty_ |= uint32_t{1} << b;
  ++entries_;
}

void BinIndex::DropExtraBlock(int b, size_t i) {
  Bin& bin = bins_[b];
  spare_blocks_.push_back(bin.blocks[i]);
  bin.blocks.erase(bin.blocks.begin() + static_cast<ptrdiff_t>(i));
  bin.firsts.erase(bin.firsts.begin() + static_cast<ptrdiff_t>(i));
}

const FreeEntry* BinIndex::Find(int b, uint64_t size, uint64_t ptr) const {
  const Bin& bin = bins_[b];
  const Block& k = pool_[bin.blocks[BlockFor(bin, size, ptr)]];
  const uint32_t at = LowerBound(k, size, ptr);
  if (at == k.count || k.entries[at].size != size || k.entries[at].ptr != ptr) return nullptr;
  return &k.entries[at];
}

std::optional<FreeEntry> BinIndex::Largest() const {
  if (nonempty_ == 0) return std::nullopt;
  const Block& last = pool_[bins_[std::bit_width(nonempty_) - 1].blocks.back()];
  return last.entries[last.count - 1];
}

uint64_t BinIndex::footprint_bytes() const {
  uint64_t bytes = pool_.capacity() * sizeof(Block) + spare_blocks_.capacity() * sizeof(uint32_t);
  for (const Bin& bin : bins_) {
    bytes += bin.firsts.capacity() * sizeof(Key) + bin.blocks.capacity() * sizeof(uint32_t);
  }
  return bytes;
}

absl::Status BinIndex::CheckInvariants() const {
  uint64_t entries = 0;
  for (int b = 0; b < kNumBins; ++b) {
    const Bin& bin = bins_[b];
    if (bin.firsts.size() != bin.blocks.size()) {
      return absl::InternalError(fmt::format("bin {}: {} first keys for {} blocks", b, bin.firsts.size(),
                                             bin.blocks.size()));
    }
    if (bin.blocks.empty()) return absl::InternalError(fmt::format("bin {} lost its own block", b));
    const bool is_empty = bin.blocks.size() == 1 && pool_[bin.blocks[0]].count == 0;
    if (((nonempty_ >> b) & 1) == is_empty) {
      return absl::InternalError(fmt::format("bin {} mask is stale", b));
    }
    if (is_empty) continue;
    const FreeEntry* last = nullptr;
    for (size_t i = 0; i < bin.blocks.size(); ++i) {
      const Block& k = pool_[bin.blocks[i]];
      if (k.count == 0 || k.count > kBlockEntries) {
        return absl::InternalError(fmt::format("bin {} block {} holds {} entries", b, i, k.count));
      }
      if (bin.firsts[i].size != k.entries[0].size || bin.firsts[i].ptr != k.entries[0].ptr) {
        return absl::InternalError(fmt::format("bin {} block {} has a stale first key", b, i));
      }
      for (uint32_t j = 0; j < k.count; ++j) {
        const FreeEntry& e = k.entries[j];
        if (BinNumForSize(Bytes(e.size)) != b) {
          return absl::InternalError(fmt::format("bin {} holds an entry of size {}", b, e.size));
        }
        if (last != nullptr && !(*last < e)) {
          return absl::InternalError(fmt::format("bin {} is out of (size, address) order at ({}, {})", b,
                                                 e.size, e.ptr));
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

}  // namespace hbmsim::bfc
