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

// TF's "with 3340 MB memory" means MiB: a decimal unit is taken as decimal,
// and the note says so and names the binary spelling.
TEST(NumbersTest, DecimalUnitNoteSaysWhichUnitItTook) {
  EXPECT_EQ(DecimalUnitNote("3340MB"),
            "3340MB read as decimal MB = 3340000000 bytes; TensorFlow logs print MiB as \"MB\": for a number "
            "copied from one, write 3340MiB (3502243840 bytes)");
  EXPECT_EQ(DecimalUnitNote("16GB"),
            "16GB read as decimal GB = 16000000000 bytes; TensorFlow logs print MiB as \"MB\": for a number "
            "copied from one, write 16GiB (17179869184 bytes)");
  EXPECT_EQ(DecimalUnitNote("3340MiB"), "");
  EXPECT_EQ(DecimalUnitNote("3340"), "");
  EXPECT_EQ(DecimalUnitNote("MB"), "");
  EXPECT_EQ(DecimalUnitNote("99999999999999999999MB"), "");  // does not parse
}

}  // namespace
}  // namespace hbmsim
