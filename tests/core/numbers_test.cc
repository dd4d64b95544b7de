#include "trace/core/numbers.h"

#include "gtest/gtest.h"

namespace hbmsim {
namespace {

TEST(NumbersTest, ParseU64) {
  EXPECT_EQ(*ParseU64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseU64("18446744073709551616").status().message(),
            "'18446744073709551616' does not fit in 64 bits");
  EXPECT_EQ(ParseU64("-1").status().message(), "negative number '-1'");
  EXPECT_EQ(ParseU64("1e3").status().message(), "'1e3' is not a decimal number");
  EXPECT_EQ(ParseU64("").status().message(), "empty number");
}

TEST(NumbersTest, ParseBytesTraceUnits) {
  EXPECT_EQ(*ParseBytes("2MiB"), Bytes(2097152));
  EXPECT_EQ(*ParseBytes("1TiB"), Bytes(uint64_t{1} << 40));
  EXPECT_EQ(*ParseBytes("1000"), Bytes(1000));
  EXPECT_EQ(ParseBytes("2GB").status().message(),
            "'2GB' is not a size (plain bytes, or a number with KiB, MiB, GiB or TiB)");
  EXPECT_EQ(*ParseBytes("2GB", /*allow_more_units=*/true), Bytes(2000000000));
  EXPECT_EQ(ParseBytes("-5").status().message(), "negative size '-5'");
  EXPECT_EQ(ParseBytes("16777216TiB").status().message(), "size '16777216TiB' does not fit in 64 bits");
}

TEST(NumbersTest, ParseAddress) {
  EXPECT_EQ(*ParseAddress("0x7f0000000000"), 0x7f0000000000u);
  EXPECT_EQ(*ParseAddress("4096"), 4096u);
  EXPECT_EQ(ParseAddress("0xZZ").status().message(), "'0xZZ' is not a hexadecimal address");
}

}  // namespace
}  // namespace hbmsim
