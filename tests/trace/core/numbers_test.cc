#include "trace/core/numbers.h"

#include "gtest/gtest.h"
#include "sim/all_layers.h"

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

// The command line takes a fraction before a unit when it is a whole number
// of bytes ("1.5GiB"); a trace never does (its spellings are fixed).
TEST(NumbersTest, ParseBytesTakesAFractionBeforeAUnitOnTheCommandLine) {
  EXPECT_EQ(*ParseBytes("1.5GiB", true), Bytes(1610612736));
  EXPECT_EQ(*ParseBytes("0.5MiB", true), Bytes(524288));
  EXPECT_EQ(*ParseBytes(".25KiB", true), Bytes(256));
  EXPECT_EQ(*ParseBytes("2.25GB", true), Bytes(2250000000));
  EXPECT_EQ(ParseBytes("78.51GiB", true).status().message(), "'78.51GiB' is not a whole number of bytes");
  EXPECT_EQ(ParseBytes("1.5", true).status().message(),
            "'1.5' is not a size: a fraction needs a unit (1.5GiB); plain bytes are whole");
  EXPECT_EQ(ParseBytes("1.GiB", true).status().message(), "'1.GiB' is not a size: no digit after the point");
  EXPECT_EQ(ParseBytes("16384.5PiB", true).status().message(), "size '16384.5PiB' does not fit in 64 bits");
  EXPECT_EQ(*ParseBytes("16383.75PiB", true), Bytes(uint64_t{16383} * (uint64_t{1} << 50) + (uint64_t{3} << 48)));
  EXPECT_EQ(ParseBytes("1.0000000000000000001GiB", true).status().message(),
            "'1.0000000000000000001GiB' is not a size: at most 18 digits after the point");
  EXPECT_EQ(ParseBytes("1.5GiB").status().message(),
            "'1.5GiB' is not a size (plain bytes, or a number with KiB, MiB, GiB or TiB)");
  EXPECT_EQ(DecimalUnitNote("1.5GB"),
            "1.5GB read as decimal GB = 1500000000 bytes; TensorFlow logs print MiB as \"MB\": for a number "
            "copied from one, write 1.5GiB (1610612736 bytes)");
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
