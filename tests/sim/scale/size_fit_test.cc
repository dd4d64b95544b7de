// The fitter on sizes worked by hand: each form found exactly, the simplest
// confirmed one preferred, and what two points cannot confirm left unexplained.
#include "sim/scale/size_fit.h"

#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::sim::scale {
namespace {

std::optional<SizeFit> Fit(std::vector<SizePoint> points) { return FitSize(points); }

TEST(SizeFitTest, ConstantFromTwoPoints) {
  const std::optional<SizeFit> f = Fit({{128, 6553600}, {256, 6553600}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kConstant);
  EXPECT_EQ(f->Text(), "6553600");
  EXPECT_EQ(PredictSize(*f, 4096), 6553600u);
}

// The first activation of the xl family: batch 4 x ctx x d_model 1600 x 4 bytes.
TEST(SizeFitTest, LinearActivation) {
  const std::optional<SizeFit> f = Fit({{128, 4 * 128 * 1600 * 4}, {256, 4 * 256 * 1600 * 4}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kLinear);
  EXPECT_EQ(f->Text(), "25600*n");
  EXPECT_EQ(PredictSize(*f, 512), 13107200u);
}

// Attention scores: batch 8 x seq x seq x 4 bytes.
TEST(SizeFitTest, QuadraticScores) {
  const std::optional<SizeFit> f = Fit({{256, 8ull * 256 * 256 * 4}, {1024, 8ull * 1024 * 1024 * 4}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kQuadratic);
  EXPECT_EQ(f->Text(), "32*n^2");
  EXPECT_EQ(PredictSize(*f, 16384), 8589934592u);
}

// Two points fit any line: a+b*n is not confirmed, so it explains nothing.
TEST(SizeFitTest, TwoPointsDoNotConfirmASum) {
  EXPECT_FALSE(Fit({{100, 1000 + 7 * 100}, {200, 1000 + 7 * 200}}).has_value());
}

TEST(SizeFitTest, ThreePointsConfirmAffine) {
  const std::optional<SizeFit> f = Fit({{100, 1700}, {150, 2050}, {200, 2400}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kAffine);
  EXPECT_EQ(f->Text(), "1000+7*n");
  EXPECT_EQ(PredictSize(*f, 1000), 8000u);
}

TEST(SizeFitTest, ThreePointsConfirmLinearPlusQuadratic) {
  // 16*n + 4*n^2 at 1, 2, 3 and a point that confirms it at 10.
  const std::optional<SizeFit> f = Fit({{1, 20}, {2, 48}, {3, 84}, {10, 560}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kLinearQuadratic);
  EXPECT_EQ(f->Text(), "16*n+4*n^2");
}

// Three points always fit a+b*n+c*n^2: only a fourth confirms it.
TEST(SizeFitTest, FullQuadraticNeedsFourPoints) {
  EXPECT_FALSE(Fit({{1, 7}, {2, 5}, {4, 100}}).has_value());
  const std::optional<SizeFit> f = Fit({{1, 111}, {2, 124}, {3, 141}, {5, 187}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kFullQuadratic);
  EXPECT_EQ(f->Text(), "102+7*n+2*n^2");
}

// A fractional coefficient rounds up to whole bytes at n.
TEST(SizeFitTest, FractionalCoefficientRoundsUp) {
  const std::optional<SizeFit> f = Fit({{2, 5}, {4, 10}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Text(), "(5/2)*n");
  EXPECT_EQ(PredictSize(*f, 3), 8u);  // 7.5 -> 8
}

TEST(SizeFitTest, NegativeAtNIsNoSize) {
  const std::optional<SizeFit> f = Fit({{10, 90}, {20, 80}, {30, 70}});  // 100 - n
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Text(), "100-1*n");
  EXPECT_EQ(PredictSize(*f, 50), 50u);
  EXPECT_FALSE(PredictSize(*f, 101).has_value());
}

TEST(SizeFitTest, RepeatedValueOrOnePointIsUnexplained) {
  EXPECT_FALSE(Fit({{128, 10}}).has_value());
  EXPECT_FALSE(Fit({{128, 10}, {128, 10}}).has_value());
}

// What no form confirms is guessed by the line through the two recorded
// sizes nearest n: an offset plus a product (the training step's 5631+520*n)
// comes out exact from two points.
TEST(SizeFitTest, GuessTakesTheLineThroughTheTwoNearestSizes) {
  const std::vector<SizePoint> two = {{128, 72191}, {256, 138751}};
  EXPECT_FALSE(FitSize(two).has_value());
  EXPECT_EQ(GuessSize(two, 512), 271871u);
  EXPECT_EQ(GuessSize(two, 192), 105471u);  // between them: interpolated
  // Three sizes no form explains (a staging buffer capped past 256): the
  // nearest two decide; beyond the largest, its segment is extended.
  const std::vector<SizePoint> three = {{128, 16777216}, {256, 33554432}, {512, 64487424}};
  EXPECT_EQ(GuessSize(three, 1024), 126353408u);  // 64487424 + 2 * (64487424 - 33554432)
  EXPECT_EQ(GuessSize(three, 192), 25165824u);    // between 128 and 256
  EXPECT_EQ(GuessSize(three, 256), 33554432u);    // a recorded size is itself
}

TEST(SizeFitTest, GuessNeedsTwoValuesAndAPositiveLine) {
  const std::vector<SizePoint> one = {{128, 10}};
  EXPECT_FALSE(GuessSize(one, 256).has_value());
  const std::vector<SizePoint> same = {{128, 10}, {128, 12}};
  EXPECT_FALSE(GuessSize(same, 256).has_value());
  const std::vector<SizePoint> falling = {{10, 90}, {20, 50}};  // 130 - 4*n
  EXPECT_EQ(GuessSize(falling, 30), 10u);
  EXPECT_FALSE(GuessSize(falling, 40).has_value());
}

TEST(SizeFitTest, SizesNearTwoToTheSixtyFourDoNotWrap) {
  const std::optional<SizeFit> f = Fit({{1, uint64_t{1} << 62}, {2, uint64_t{1} << 63}});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->form, SizeForm::kLinear);
  EXPECT_FALSE(PredictSize(*f, 4).has_value());  // 2^64: beyond 64 bits
}

}  // namespace
}  // namespace hbmsim::sim::scale
