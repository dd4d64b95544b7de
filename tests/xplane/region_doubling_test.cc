// Which region sizes BFC's doubling makes (trace/xplane/region_doubling.h),
// on sizes worked by hand from REF's Extend: a plain step doubles the current
// size after the region, a jump (a request larger than it) does not.
#include "trace/xplane/region_doubling.h"

#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::xplane {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

std::vector<int64_t> MiB(std::vector<int64_t> sizes) {
  for (int64_t& s : sizes) s *= kMiB;
  return sizes;
}

TEST(RegionDoubling, ASizeRepeatsOnlyAfterAJump) {
  EXPECT_TRUE(MadeByDoubling(MiB({2, 4, 8})));         // plain steps
  EXPECT_TRUE(MadeByDoubling(MiB({32, 2, 64, 32})));   // 2; a jump to 32; 32; 64 (any order given)
  EXPECT_TRUE(MadeByDoubling(MiB({4})));               // a first request over 2 MiB jumps
  EXPECT_FALSE(MadeByDoubling(MiB({2, 2})));           // after 2 the current size is 4
  EXPECT_FALSE(MadeByDoubling(MiB({32, 32, 64, 64}))); // the second 64 would be 128
  EXPECT_FALSE(MadeByDoubling(MiB({1})));              // below the 2 MiB first region
  EXPECT_FALSE(MadeByDoubling(MiB({6})));              // no power of two times 2 MiB
}

TEST(RegionDoubling, FreeRegionsCompleteThePoolOnePerSetBitWhenThatWorks) {
  EXPECT_EQ(CompleteByDoubling({}, 6 * kMiB), MiB({4, 2}));
  EXPECT_EQ(CompleteByDoubling(MiB({32, 32, 64, 128}), 256 * kMiB), MiB({256}));
  EXPECT_EQ(CompleteByDoubling({}, 0), std::vector<int64_t>{});
  // {4, 4} needs the first 4 to be a jump, from 2 MiB: any 2 MiB region before it
  // makes the second 4 an 8, and 2 MiB more cannot be made without one.
  EXPECT_EQ(CompleteByDoubling(MiB({4, 4}), 2 * kMiB), std::nullopt);
  EXPECT_EQ(CompleteByDoubling({}, kMiB), std::nullopt);  // not a multiple of 2 MiB
}

StartRegion Placed(uint64_t base_mib, int64_t size_mib, bool end_recorded) {
  return {base_mib * kMiB, size_mib * kMiB, 0, end_recorded};
}

// tf_keras_2023_instance2's regions as the addresses give them: A's only chunk
// fits 64 MiB, B, C and D end where a chunk handed out whole ended; 1 MiB of
// live bytes lies where the recording never looks; the pool holds 512 MiB.
TEST(RegionDoubling, OnlyTheRegionWhoseEndIsNotRecordedIsWidened) {
  const std::vector<StartRegion> placed = {Placed(0, 64, false), Placed(128, 64, true), Placed(352, 32, true),
                                           Placed(3072, 32, true)};
  const std::optional<DoublingLayout> l = LayOutByDoubling(placed, kMiB, 512 * kMiB);
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
                             0, 512 * kMiB),
            std::nullopt);
  // B's end not recorded: B grows (up to C at 352 MiB) instead of A.
  const std::optional<DoublingLayout> l = LayOutByDoubling(
      {Placed(0, 64, false), Placed(64, 64, false), Placed(352, 32, true), Placed(3072, 32, true)}, 0,
      512 * kMiB);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->placed_sizes, MiB({64, 128, 32, 32}));
  ASSERT_EQ(l->untouched.size(), 1u);
  EXPECT_EQ(l->untouched[0].size, 256 * kMiB);
  EXPECT_EQ(l->untouched[0].unknown_live, 0);
}

}  // namespace
}  // namespace hbmsim::xplane
