// FreeRanges (chunked address order, max tree, BFC bins as the size index)
// against a std::map oracle: the first and best fits and every range after
// each step of long random programs that split, merge and empty many chunks.
// BestFitBlocks (best_fit's linked blocks) against the same oracle.
#include "allocator/baselines/free_ranges.h"
#include "allocator/baselines/best_fit_blocks.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::allocator::baselines {
namespace {

// The textbook form: offset -> size, scanned.
struct Oracle {
  std::map<uint64_t, uint64_t> ranges;

  void Release(uint64_t offset, uint64_t size) {
    auto next = ranges.find(offset + size);
    if (next != ranges.end()) {
      size += next->second;
      ranges.erase(next);
    }
    auto prev = ranges.lower_bound(offset);
    if (prev != ranges.begin() && std::prev(prev)->first + std::prev(prev)->second == offset) {
      std::prev(prev)->second += size;
      return;
    }
    ranges[offset] = size;
  }
  void Take(uint64_t offset, uint64_t size) {
    auto it = std::prev(ranges.upper_bound(offset));
    const uint64_t base = it->first, end = it->first + it->second;
    ranges.erase(it);
    if (base < offset) ranges[base] = offset - base;
    if (offset + size < end) ranges[offset + size] = end - offset - size;
  }
  std::optional<uint64_t> FirstFit(uint64_t size) const {
    for (const auto& [offset, length] : ranges) {
      if (length >= size) return offset;
    }
    return std::nullopt;
  }
  std::optional<uint64_t> BestFit(uint64_t size) const {
    std::optional<std::pair<uint64_t, uint64_t>> best;  // (size, offset)
    for (const auto& [offset, length] : ranges) {
      if (length >= size && (!best || std::make_pair(length, offset) < *best)) best = {length, offset};
    }
    if (!best) return std::nullopt;
    return best->second;
  }
};

std::vector<std::pair<uint64_t, uint64_t>> Contents(const FreeRanges& f) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  f.ForEach([&](uint64_t offset, uint64_t size) { out.emplace_back(offset, size); });
  return out;
}

TEST(FreeRangesTest, ReleaseMergesBothNeighboursAndTakeSplitsAMiddle) {
  FreeRanges f(/*index_by_size=*/true);
  f.Release(0, 100);
  f.Release(200, 100);
  f.Release(100, 100);  // joins both
  EXPECT_EQ(Contents(f), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 300}}));
  f.Take(120, 30);
  EXPECT_EQ(Contents(f), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 120}, {150, 150}}));
  EXPECT_EQ(f.TakeBestFit(110), 0u);  // 120 is smaller than 150
  EXPECT_EQ(f.TakeFirstFit(15), 150u);
  EXPECT_EQ(Contents(f), (std::vector<std::pair<uint64_t, uint64_t>>{{110, 10}, {165, 135}}));
  EXPECT_EQ(f.total(), 145u);
  EXPECT_EQ(f.Largest(), 135u);
  EXPECT_EQ(f.TakeFirstFit(136), std::nullopt);
  EXPECT_TRUE(f.Check().ok()) << f.Check();
}

// Random programs over a region of `slots` units: blocks are taken by first
// fit, best fit or at a chosen free place, and released in random order.
void RunAgainstOracle(uint64_t seed, int steps, uint64_t slots, bool check_each) {
  FreeRanges f(/*index_by_size=*/true);
  Oracle o;
  f.Release(0, slots * 256);
  o.Release(0, slots * 256);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  uint64_t x = seed;
  const auto next = [&x] {
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (int step = 0; step < steps; ++step) {
    const uint64_t r = next();
    if (!live.empty() && (r % 100 < 45 || o.ranges.empty())) {
      const size_t k = next() % live.size();
      f.Release(live[k].first, live[k].second);
      o.Release(live[k].first, live[k].second);
      live[k] = live.back();
      live.pop_back();
    } else if (!o.ranges.empty()) {
      const uint64_t size = (1 + next() % 24) * 256;
      const int how = static_cast<int>(r % 3);
      std::optional<uint64_t> at;
      if (how == 0) {
        at = f.TakeFirstFit(size);
        ASSERT_EQ(at, o.FirstFit(size)) << "step " << step;
      } else if (how == 1) {
        at = f.TakeBestFit(size);
        ASSERT_EQ(at, o.BestFit(size)) << "step " << step;
      } else {
        // A place inside a random free range (what a paged or planned policy does).
        auto it = o.ranges.begin();
        std::advance(it, static_cast<long>(next() % o.ranges.size()));
        if (it->second < size) continue;
        at = it->first + (next() % ((it->second - size) / 256 + 1)) * 256;
        f.Take(*at, size);
      }
      if (!at) continue;
      o.Take(*at, size);
      live.emplace_back(*at, size);
    }
    if (check_each || step % 1000 == 0) {
      ASSERT_TRUE(f.Check().ok()) << "step " << step << ": " << f.Check();
      ASSERT_EQ(Contents(f), (std::vector<std::pair<uint64_t, uint64_t>>(o.ranges.begin(), o.ranges.end())))
          << "step " << step;
    }
  }
  ASSERT_TRUE(f.Check().ok()) << f.Check();
  EXPECT_EQ(Contents(f), (std::vector<std::pair<uint64_t, uint64_t>>(o.ranges.begin(), o.ranges.end())));
}

TEST(FreeRangesTest, SmallRegionMatchesTheOracleAtEveryStep) { RunAgainstOracle(1, 20000, 600, true); }

TEST(FreeRangesTest, ThousandsOfRangesMatchTheOracle) { RunAgainstOracle(7, 60000, 200000, false); }

// best_fit's blocks: random takes (best fit) and releases, every free block
// and every placement as the oracle's.
void RunBestFitBlocks(uint64_t seed, int steps, uint64_t slots, bool check_each) {
  BestFitBlocks f(slots * 256);
  Oracle o;
  o.Release(0, slots * 256);
  std::vector<std::pair<uint64_t, uint32_t>> live;  // (size, record)
  uint64_t x = seed;
  const auto next = [&x] {
    x += 0x9e3779b97f4a7c15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::vector<uint64_t> offsets;
  for (int step = 0; step < steps; ++step) {
    if (!live.empty() && (next() % 100 < 45 || o.ranges.empty())) {
      const size_t k = next() % live.size();
      f.Release(live[k].second);
      o.Release(offsets[k], live[k].first);
      live[k] = live.back();
      live.pop_back();
      offsets[k] = offsets.back();
      offsets.pop_back();
    } else {
      const uint64_t size = (1 + next() % 24) * 256;
      const std::optional<BestFitBlocks::Taken> t = f.TakeBestFit(size);
      const std::optional<uint64_t> want = o.BestFit(size);
      ASSERT_EQ(t.has_value(), want.has_value()) << "step " << step;
      if (!t) continue;
      ASSERT_EQ(t->offset, *want) << "step " << step;
      o.Take(t->offset, size);
      live.emplace_back(size, t->block);
      offsets.push_back(t->offset);
    }
    if (check_each || step % 1000 == 0) {
      ASSERT_TRUE(f.Check().ok()) << "step " << step << ": " << f.Check();
      std::vector<std::pair<uint64_t, uint64_t>> got;
      f.ForEach([&](uint64_t offset, uint64_t size) { got.emplace_back(offset, size); });
      ASSERT_EQ(got, (std::vector<std::pair<uint64_t, uint64_t>>(o.ranges.begin(), o.ranges.end())))
          << "step " << step;
    }
  }
}

TEST(BestFitBlocksTest, SmallRegionMatchesTheOracleAtEveryStep) { RunBestFitBlocks(3, 20000, 600, true); }

TEST(BestFitBlocksTest, ThousandsOfBlocksMatchTheOracle) { RunBestFitBlocks(11, 60000, 200000, false); }

TEST(BestFitBlocksTest, EmptyRegionFitsNothing) {
  BestFitBlocks f(0);
  EXPECT_FALSE(f.TakeBestFit(256).has_value());
  EXPECT_EQ(f.Largest(), 0u);
  EXPECT_TRUE(f.Check().ok());
}

}  // namespace
}  // namespace hbmsim::allocator::baselines
