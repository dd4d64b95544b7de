// The bins' block lists against the structure TSL uses (a std::set per bin,
// ordered by (size, address)): same best fits, same largest chunk, same
// order, through enough entries to split and drop blocks many times.
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "allocator/core/bins.h"
#include "gtest/gtest.h"

namespace hbmsim::allocator::bfc {
namespace {

struct Oracle {
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> entries;  // (size, ptr, handle)

  std::optional<FreeEntry> TakeBestFit(uint64_t rounded) {
    auto it = entries.lower_bound({rounded, 0, 0});
    if (it == entries.end()) return std::nullopt;
    const auto [size, ptr, handle] = *it;
    entries.erase(it);
    return FreeEntry{size, ptr, handle};
  }
};

std::vector<FreeEntry> Contents(const BinIndex& bins) {
  std::vector<FreeEntry> out;
  for (int b = 0; b < kNumBins; ++b) bins.ForEach(b, [&](const FreeEntry& e) { out.push_back(e); });
  return out;
}

TEST(BfcBins, BestFitIsTheLeastSizeThenAddress) {
  BinIndex bins;
  bins.Insert(BinNumForSize(Bytes(1024)), {1024, 4096, 1});
  bins.Insert(BinNumForSize(Bytes(1024)), {1024, 2048, 2});
  bins.Insert(BinNumForSize(Bytes(1280)), {1280, 0, 3});
  bins.Insert(BinNumForSize(Bytes(8192)), {8192, 9000 * 256, 4});
  EXPECT_EQ(bins.TakeBestFit(Bytes(1024))->handle, 2u);  // equal sizes: the lower address
  EXPECT_EQ(bins.TakeBestFit(Bytes(1025))->handle, 3u);  // the next size up, same bin
  EXPECT_EQ(bins.TakeBestFit(Bytes(1536))->handle, 4u);  // an empty rest of the bin: the next bin
  EXPECT_EQ(bins.Largest()->handle, 1u);
  EXPECT_FALSE(bins.TakeBestFit(Bytes(2048)).has_value());
  EXPECT_EQ(bins.size(), 1u);
  EXPECT_TRUE(bins.CheckInvariants().ok());
}

// One bin with thousands of entries of few distinct sizes: many blocks,
// split and dropped over and over, and ties on size broken by address.
TEST(BfcBins, ManyBlocksMatchTheOrderedSet) {
  std::mt19937_64 rng(7);  // fixed seed: the test is deterministic
  BinIndex bins;
  Oracle oracle;
  uint64_t next_handle = 0;
  std::vector<std::pair<uint64_t, uint64_t>> live;  // (size, ptr) filed now
  for (int step = 0; step < 40000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5 || live.empty()) {
      // Sizes from bins 2..4 (1 KiB .. 8 KiB), in steps of 256: many ties.
      const uint64_t size = 1024 + 256 * (rng() % 28);
      const uint64_t ptr = 256 * (next_handle * 7919 % 1000003);  // distinct addresses
      const FreeEntry e{size, ptr, next_handle++};
      bins.Insert(BinNumForSize(Bytes(size)), e);
      oracle.entries.insert({e.size, e.ptr, e.handle});
      live.push_back({size, ptr});
    } else if (op < 8) {
      const size_t k = rng() % live.size();
      const auto [size, ptr] = live[k];
      bins.Remove(BinNumForSize(Bytes(size)), size, ptr);
      oracle.entries.erase(oracle.entries.lower_bound({size, ptr, 0}));
      live[k] = live.back();
      live.pop_back();
    } else {
      const uint64_t rounded = 256 * (1 + rng() % 40);
      const std::optional<FreeEntry> got = bins.TakeBestFit(Bytes(rounded));
      const std::optional<FreeEntry> want = oracle.TakeBestFit(rounded);
      ASSERT_EQ(got.has_value(), want.has_value()) << "step " << step;
      if (got) {
        ASSERT_EQ(got->handle, want->handle) << "step " << step;
        std::erase(live, std::make_pair(got->size, got->ptr));
      }
    }
    ASSERT_TRUE(bins.CheckInvariants().ok()) << "step " << step << ": " << bins.CheckInvariants();
    ASSERT_EQ(bins.size(), oracle.entries.size());
  }
  // The final order is the set's, entry by entry.
  const std::vector<FreeEntry> got = Contents(bins);
  ASSERT_EQ(got.size(), oracle.entries.size());
  size_t i = 0;
  for (const auto& [size, ptr, handle] : oracle.entries) EXPECT_EQ(got[i++].handle, handle);
  EXPECT_GT(got.size(), 3 * BinIndex::kBlockEntries);  // the run really used several blocks
}

TEST(BfcBins, EmptiedBinsKeepTheirBlockAndReuseIt) {
  BinIndex bins;
  const uint64_t before = bins.footprint_bytes();
  for (int i = 0; i < 1000; ++i) {
    bins.Insert(0, {256, 256 * static_cast<uint64_t>(i), static_cast<uint64_t>(i)});
    bins.Remove(0, 256, 256 * static_cast<uint64_t>(i));
  }
  EXPECT_EQ(bins.footprint_bytes(), before);
  EXPECT_TRUE(bins.empty(0));
  EXPECT_EQ(bins.nonempty_mask(), 0u);
  EXPECT_FALSE(bins.Largest().has_value());
}

}  // namespace
}  // namespace hbmsim::allocator::bfc
