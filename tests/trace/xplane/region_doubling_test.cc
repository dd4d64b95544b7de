// Which region sizes BFC's doubling makes (trace/xplane/region_doubling.h),
// on sizes worked by hand from REF's Extend: a plain step doubles the current
// size after the region, a jump (a request larger than it) does not.
#include "trace/xplane/region_doubling.h"

#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::trace::xplane {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kTwo = 2 * kMiB;  // REF's first region

std::vector<int64_t> MiB(std::vector<int64_t> sizes) {
  for (int64_t& s : sizes) s *= kMiB;
  return sizes;
}

TEST(RegionDoubling, ASizeRepeatsOnlyAfterAJump) {
  EXPECT_TRUE(MadeByDoubling(MiB({2, 4, 8}), kTwo));         // plain steps
  EXPECT_TRUE(MadeByDoubling(MiB({32, 2, 64, 32}), kTwo));   // 2; a jump to 32; 32; 64 (any order given)
  EXPECT_TRUE(MadeByDoubling(MiB({4}), kTwo));               // a first request over 2 MiB jumps
  EXPECT_FALSE(MadeByDoubling(MiB({2, 2}), kTwo));           // after 2 the current size is 4
  EXPECT_FALSE(MadeByDoubling(MiB({32, 32, 64, 64}), kTwo)); // the second 64 would be 128
  EXPECT_FALSE(MadeByDoubling(MiB({1}), kTwo));              // below the 2 MiB first region
  EXPECT_FALSE(MadeByDoubling(MiB({6}), kTwo));              // no power of two times 2 MiB
  // From 1 MiB (TF 1.x-2.1): 1; a jump to 32; 32; 64; 128; 256 = 513 MiB.
  EXPECT_TRUE(MadeByDoubling(MiB({1, 32, 32, 64, 128, 256}), kMiB));
}

TEST(RegionDoubling, FreeRegionsCompleteThePoolOnePerSetBitWhenThatWorks) {
  EXPECT_EQ(CompleteByDoubling({}, 6 * kMiB, kTwo), MiB({4, 2}));
  EXPECT_EQ(CompleteByDoubling(MiB({32, 32, 64, 128}), 256 * kMiB, kTwo), MiB({256}));
  EXPECT_EQ(CompleteByDoubling({}, 0, kTwo), std::vector<int64_t>{});
  // {4, 4} needs the first 4 to be a jump, from 2 MiB: any 2 MiB region before it
  // makes the second 4 an 8, and 2 MiB more cannot be made without one.
  EXPECT_EQ(CompleteByDoubling(MiB({4, 4}), 2 * kMiB, kTwo), std::nullopt);
  EXPECT_EQ(CompleteByDoubling({}, kMiB, kTwo), std::nullopt);  // not a multiple of 2 MiB
}

StartRegion Placed(uint64_t base_mib, int64_t size_mib, bool end_recorded) {
  return {base_mib * kMiB, size_mib * kMiB, 0, end_recorded};
}

// tf_keras_2023_instance2's regions as the addresses give them: A's only chunk
// fits 64 MiB, B, C and D end where a chunk handed out whole ended; 1 MiB of
// live bytes lies where the recording never looks.
std::vector<StartRegion> KerasRegions() {
  return {Placed(0, 64, false), Placed(128, 64, true), Placed(352, 32, true), Placed(3072, 32, true)};
}

// Its readings' pool, 513 MiB, grew from a 1 MiB first region: U's 1 MiB fills it.
TEST(RegionDoubling, AnOddMiBPoolGrewFromAOneMiBRegionHoldingTheUnknownBytes) {
  const std::optional<DoublingLayout> l = LayOutByDoubling(KerasRegions(), kMiB, 513 * kMiB, kMiB);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->placed_sizes, MiB({128, 64, 32, 32}));
  ASSERT_EQ(l->untouched.size(), 2u);
  EXPECT_EQ(l->untouched[0].size, kMiB);
  EXPECT_EQ(l->untouched[0].unknown_live, kMiB);
  EXPECT_EQ(l->untouched[1].size, 256 * kMiB);
  EXPECT_EQ(l->untouched[1].unknown_live, 0);
}

// The same regions in a pool of 512 MiB grown from 2 MiB.
TEST(RegionDoubling, OnlyTheRegionWhoseEndIsNotRecordedIsWidened) {
  const std::optional<DoublingLayout> l = LayOutByDoubling(KerasRegions(), kMiB, 512 * kMiB, kTwo);
  ASSERT_TRUE(l.has_value());
  // {32, 32, 64, 64} cannot be made; A doubled to 128 (up to B) can, with 256 MiB free.
  EXPECT_EQ(l->placed_sizes, MiB({128, 64, 32, 32}));
  EXPECT_EQ(l->doublings, 1);
  ASSERT_EQ(l->untouched.size(), 1u);
  EXPECT_EQ(l->untouched[0].size, 256 * kMiB);
  // A region of its own (2 MiB) leaves 254 MiB, which no doubling makes: U's
  // rest lies at the bottom of the untouched region.
  EXPECT_EQ(l->untouched[0].unknown_live, kMiB);
  EXPECT_FALSE(l->untouched[0].base.has_value());
}

TEST(RegionDoubling, ARegionIsNeverWidenedIntoTheNext) {
  // A ends where B starts and B's end is recorded: neither can grow, and
  // {32, 32, 64, 64} is no pool BFC's doubling makes.
  EXPECT_EQ(LayOutByDoubling({Placed(0, 64, false), Placed(64, 64, true), Placed(352, 32, true),
                              Placed(3072, 32, true)},
                             0, 512 * kMiB, kTwo),
            std::nullopt);
  // B's end not recorded: B grows (up to C at 352 MiB) instead of A.
  const std::optional<DoublingLayout> l = LayOutByDoubling(
      {Placed(0, 64, false), Placed(64, 64, false), Placed(352, 32, true), Placed(3072, 32, true)}, 0,
      512 * kMiB, kTwo);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->placed_sizes, MiB({64, 128, 32, 32}));
  ASSERT_EQ(l->untouched.size(), 1u);
  EXPECT_EQ(l->untouched[0].size, 256 * kMiB);
  EXPECT_EQ(l->untouched[0].unknown_live, 0);
}

}  // namespace
}  // namespace hbmsim::trace::xplane
