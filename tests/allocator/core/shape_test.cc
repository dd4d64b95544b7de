#include "allocator/core/shape.h"

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(ShapeTest, ParsesRank2) {
  auto s = ParseShape("bf16[4096,1024]");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dtype, DType::kBF16);
  EXPECT_EQ(s->rank(), 2);
  EXPECT_EQ(s->dims[0], 4096u);
  EXPECT_EQ(UnpaddedBytes(*s), 4096u * 1024u * 2u);
  EXPECT_EQ(FormatShape(*s), "bf16[4096,1024]");
}

TEST(ShapeTest, ScalarAndAliases) {
  auto s = ParseShape("float[]");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(FormatShape(*s), "f32[]");
  EXPECT_EQ(UnpaddedBytes(*s), 4u);
  EXPECT_EQ(UnpaddedBytes(*ParseShape("s4[3]")), 2u);  // 12 bits -> 2 bytes
}

TEST(ShapeTest, RejectsMalformed) {
  EXPECT_EQ(ParseShape("f32").status().message(), "shape 'f32' is not of the form dtype[d0,d1,...]");
  EXPECT_EQ(ParseShape("q7[1]").status().message(), "unknown dtype 'q7' in shape 'q7[1]'");
  EXPECT_EQ(ParseShape("f32[1,-2]").status().message(),
            "dimension '-2' in shape 'f32[1,-2]' is not an unsigned 64-bit integer");
  EXPECT_EQ(ParseShape("f32[1,]").status().message(), "shape 'f32[1,]' ends with a comma");
}

TEST(ShapeTest, HugeShapeSaturates) {
  auto s = ParseShape("f64[18446744073709551615,4]");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(UnpaddedBytes(*s), UINT64_MAX);
}

}  // namespace
}  // namespace hbmsim
