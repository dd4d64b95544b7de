// The aligner on token sequences worked by hand: a call at one size only, a
// run of calls on another path, and sequences too far apart to align.
#include "sim/scale/stream_align.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::sim::scale {
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

// The longest common subsequence's length by the textbook table.
size_t LcsLength(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<std::vector<size_t>> t(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

// On random edits of random sequences (seed 44), the alignment matches equal
// tokens in increasing order on both sides, and as many as the LCS has: the
// shortest edit script, nothing less.
TEST(StreamAlignTest, MatchesAsManyAsTheLongestCommonSubsequence) {
  std::mt19937_64 rng(44);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> a(rng() % 60);
    for (uint64_t& x : a) x = rng() % 5;
    std::vector<uint64_t> b;
    for (uint64_t x : a) {
      if (rng() % 6 == 0) continue;                // dropped at the other size
      if (rng() % 6 == 0) b.push_back(rng() % 5);  // a call at the other size only
      b.push_back(x);
    }
    const StepAlignment s = AlignSteps(a, b);
    ASSERT_TRUE(s.complete);
    EXPECT_EQ(s.matched, LcsLength(a, b)) << "round " << round;
    int64_t last = -1;
    for (size_t i = 0; i < a.size(); ++i) {
      if (s.other_of[i] == X) continue;
      ASSERT_LT(s.other_of[i], b.size());
      EXPECT_EQ(a[i], b[s.other_of[i]]);
      EXPECT_GT(static_cast<int64_t>(s.other_of[i]), last);
      last = s.other_of[i];
    }
  }
}

}  // namespace
}  // namespace hbmsim::sim::scale
