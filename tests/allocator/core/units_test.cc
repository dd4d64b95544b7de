#include "allocator/core/units.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(BytesTest, RoundUpToGranule) {
  EXPECT_EQ(Bytes(0).RoundUp(256), Bytes(0));
  EXPECT_EQ(Bytes(1).RoundUp(256), Bytes(256));
  EXPECT_EQ(Bytes(256).RoundUp(256), Bytes(256));
  EXPECT_EQ(Bytes(257).RoundUp(256), Bytes(512));
  EXPECT_EQ(Bytes(1000).RoundDown(256), Bytes(768));
}

TEST(BytesTest, RoundUpSaturatesInsteadOfWrapping) {
  EXPECT_EQ(Bytes(UINT64_MAX).RoundUp(256), Bytes::Max());
  EXPECT_EQ(Bytes(UINT64_MAX - 254).RoundUp(256), Bytes::Max());
  // The largest multiple of 256 is representable and stays put.
  EXPECT_EQ(Bytes(UINT64_MAX - 255).RoundUp(256), Bytes(UINT64_MAX - 255));
}

TEST(BytesTest, AdditionSaturates) {
  EXPECT_EQ(Bytes(UINT64_MAX - 1) + Bytes(5), Bytes::Max());
  EXPECT_EQ(Bytes(3) + Bytes(4), Bytes(7));
  EXPECT_EQ(Bytes(3).SaturatingSub(Bytes(4)), Bytes(0));
  EXPECT_EQ(Bytes::MiB(2), Bytes(2097152));
}

TEST(OffsetTest, AddressArithmetic) {
  const Offset a(4096);
  EXPECT_EQ(a + Bytes(256), Offset(4352));
  EXPECT_EQ(Offset(4352) - a, Bytes(256));
}

}  // namespace
}  // namespace hbmsim
