#include "trace/core/human_bytes.h"

#include <limits>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

// Values from the reference (§2) and from real BFC dumps in shared/bfc_dumps/.
TEST(HumanReadableNumBytesTest, MatchesTensorFlowDigitForDigit) {
  EXPECT_EQ(HumanReadableNumBytes(int64_t{0}), "0B");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{256}), "256B");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{1023}), "1023B");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{1024}), "1.0KiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{115200}), "112.5KiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{50 * 1024}), "50.0KiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{1048575}), "1024.0KiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{1048576}), "1.00MiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{614400000}), "585.94MiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{268435456}), "256.00MiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{589212672}), "561.92MiB");
  EXPECT_EQ(HumanReadableNumBytes(int64_t{17179869184}), "16.00GiB");
}

TEST(HumanReadableNumBytesTest, NegativeAndExtremeValues) {
  EXPECT_EQ(HumanReadableNumBytes(int64_t{-1536}), "-1.5KiB");
  EXPECT_EQ(HumanReadableNumBytes(std::numeric_limits<int64_t>::min()), "-8E");
  EXPECT_EQ(HumanReadableNumBytes(std::numeric_limits<int64_t>::max()), "8.00EiB");
  EXPECT_EQ(HumanReadableNumBytes(Bytes::Max()), "8.00EiB");
  EXPECT_EQ(HumanReadableNumBytes(Bytes(1536)), "1.5KiB");
}

}  // namespace
}  // namespace hbmsim
