// LimitFraction: a minimum limit said as a fraction of the device, rounded up
// to hundredths so the setting never gives less than the minimum.
#include "sim/whatif/advice.h"

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(LimitFractionTest, RoundsUpToHundredths) {
  EXPECT_EQ(LimitFraction(Bytes(50), Bytes(100)), "0.50");
  EXPECT_EQ(LimitFraction(Bytes(5001), Bytes(10000)), "0.51");
  EXPECT_EQ(LimitFraction(Bytes(1), Bytes(1000)), "0.01");
  EXPECT_EQ(LimitFraction(Bytes(100), Bytes(100)), "1.00");
  // 83.36 GiB of an 80 GiB H100 does not fit at any fraction.
  EXPECT_EQ(LimitFraction(Bytes(89508544724), Bytes(uint64_t{80} << 30)), std::nullopt);
  // 60 GiB of 79.11 GiB (PyTorch's "total capacity"): 0.7584..., so 0.76.
  EXPECT_EQ(LimitFraction(Bytes(uint64_t{60} << 30), Bytes(84942979072)), "0.76");
  // No overflow near the top of uint64.
  EXPECT_EQ(LimitFraction(Bytes(uint64_t{1} << 62), Bytes(uint64_t{1} << 63)), "0.50");
}

}  // namespace
}  // namespace hbmsim
