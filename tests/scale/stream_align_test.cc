// The aligner on token sequences worked by hand: a call at one size only, a
// run of calls on another path, and sequences too far apart to align.
#include "sim/scale/stream_align.h"

#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::scale {
namespace {

constexpr uint32_t X = kNoStep;

StepAlignment Align(std::vector<uint64_t> a, std::vector<uint64_t> b) { return AlignSteps(a, b); }

TEST(StreamAlignTest, EqualSequencesMatchOneToOne) {
  const StepAlignment a = Align({1, 2, 3}, {1, 2, 3});
  EXPECT_EQ(a.other_of, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(a.matched, 3u);
  EXPECT_TRUE(a.complete);
}

// The header's picture: X at the other size only, E at the template's only.
TEST(StreamAlignTest, OneCallEachSide) {
  const StepAlignment a = Align({'A', 'B', 'C', 'D', 'E', 'F'}, {'A', 'B', 'X', 'C', 'D', 'F'});
  EXPECT_EQ(a.other_of, (std::vector<uint32_t>{0, 1, 3, 4, X, 5}));
  EXPECT_EQ(a.matched, 5u);
}

// A run of extra calls in the middle of a repeated pattern (the attention
// family's largest member takes another path for some calls).
TEST(StreamAlignTest, ExtraRunInARepeatedPattern) {
  const StepAlignment a = Align({1, 2, 3, 1, 2, 3, 1, 2, 3}, {1, 2, 3, 1, 7, 7, 2, 3, 1, 2, 3});
  EXPECT_EQ(a.other_of, (std::vector<uint32_t>{0, 1, 2, 3, 6, 7, 8, 9, 10}));
  EXPECT_EQ(a.matched, 9u);
}

TEST(StreamAlignTest, NothingInCommon) {
  const StepAlignment a = Align({1, 2}, {3, 4, 5});
  EXPECT_EQ(a.other_of, (std::vector<uint32_t>{X, X}));
  EXPECT_EQ(a.matched, 0u);
  EXPECT_TRUE(a.complete);
}

TEST(StreamAlignTest, EmptySides) {
  EXPECT_EQ(Align({}, {1}).matched, 0u);
  EXPECT_EQ(Align({1, 2}, {}).other_of, (std::vector<uint32_t>{X, X}));
}

// More than kMaxEdits differences in the middle: the common ends still align.
TEST(StreamAlignTest, TooFarApartKeepsTheCommonEnds) {
  std::vector<uint64_t> a = {9}, b = {9};
  for (uint64_t i = 0; i < kMaxEdits; ++i) {
    a.push_back(100 + i);
    b.push_back(100000 + i);
  }
  a.push_back(8);
  b.push_back(8);
  const StepAlignment s = AlignSteps(a, b);
  EXPECT_FALSE(s.complete);
  EXPECT_EQ(s.matched, 2u);
  EXPECT_EQ(s.other_of.front(), 0u);
  EXPECT_EQ(s.other_of.back(), b.size() - 1);
}

}  // namespace
}  // namespace hbmsim::scale
