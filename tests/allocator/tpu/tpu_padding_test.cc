#include "allocator/tpu/tpu_padding.h"

#include "allocator/core/shape.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

uint64_t Padded(std::string_view shape_text, uint64_t requested, bool tile_padding = true) {
  const absl::StatusOr<TensorShape> shape = ParseShape(shape_text);
  EXPECT_TRUE(shape.ok()) << shape_text;
  return TpuBufferBytes(Bytes(requested), &*shape, tile_padding, Bytes(512)).value();
}

TEST(TpuPaddingTest, SublaneTileDependsOnElementWidth) {
  EXPECT_EQ(SublaneTile(DType::kF32), 8u);
  EXPECT_EQ(SublaneTile(DType::kF64), 8u);
  EXPECT_EQ(SublaneTile(DType::kBF16), 16u);
  EXPECT_EQ(SublaneTile(DType::kF16), 16u);
  EXPECT_EQ(SublaneTile(DType::kS8), 32u);
  EXPECT_EQ(SublaneTile(DType::kF8E4M3FN), 32u);
  EXPECT_EQ(SublaneTile(DType::kS4), 64u);
}

TEST(TpuPaddingTest, RankOnePadsToMultiplesOf1024Elements) {
  EXPECT_EQ(Padded("f32[3]", 12), 4096u);  // 1024 x 4 B
  EXPECT_EQ(Padded("bf16[1000]", 2000), 2048u);
  EXPECT_EQ(Padded("s8[1]", 1), 1024u);
  EXPECT_EQ(Padded("s8[1025]", 1025), 2048u);
  EXPECT_EQ(Padded("f32[524288]", 2097152), 2097152u);  // already whole tiles
}

TEST(TpuPaddingTest, RankTwoPadsLastTo128AndSecondLastToSublaneTile) {
  EXPECT_EQ(Padded("f32[5,100]", 2000), 4096u);         // 8 x 128 x 4
  EXPECT_EQ(Padded("bf16[5,100]", 1000), 4096u);        // 16 x 128 x 2
  EXPECT_EQ(Padded("s8[5,100]", 500), 4096u);           // 32 x 128 x 1
  EXPECT_EQ(Padded("f32[129,1024]", 528384), 557056u);  // 136 x 1024 x 4
  EXPECT_EQ(Padded("bf16[3,17,200]", 20400), 49152u);   // 3 x 32 x 256 x 2
}

TEST(TpuPaddingTest, MinorDimOfOneExpands128Times) {
  // The documented log: u32[12582912,1]{1,0:T(8,128)} is 48 MB unpadded, 6 GB padded.
  EXPECT_EQ(Padded("u32[12582912,1]", 50331648), 6442450944u);
}

TEST(TpuPaddingTest, ScalarTakesOneGranule) { EXPECT_EQ(Padded("f32[]", 4), 512u); }

TEST(TpuPaddingTest, WithoutShapeOrPaddingOnlyTheGranuleApplies) {
  EXPECT_EQ(TpuBufferBytes(Bytes(1000), nullptr, true, Bytes(512)).value(), 1024u);
  EXPECT_EQ(Padded("f32[3]", 12, /*tile_padding=*/false), 512u);
  EXPECT_EQ(TpuBufferBytes(Bytes(0), nullptr, true, Bytes(512)).value(), 0u);
}

TEST(TpuPaddingTest, CallerBytesAreNeverShrunkByTheShape) { EXPECT_EQ(Padded("f32[3]", 5000), 5120u); }

TEST(TpuPaddingTest, HugeShapesSaturateInsteadOfWrapping) {
  EXPECT_EQ(Padded("f32[4294967296,4294967296]", 1), Bytes::Max().value());
  EXPECT_EQ(TpuBufferBytes(Bytes::Max(), nullptr, true, Bytes(512)), Bytes::Max());
}

TEST(TpuPaddingTest, AllocationReportsPaddingPerBufferAndInTotal) {
  TpuAllocator a(Options(16 * kMiB));
  const TensorShape f32_3 = *ParseShape("f32[3]");
  const TensorShape bf16_5x100 = *ParseShape("bf16[5,100]");
  const AllocResult r1 = Alloc(a, 1, 12, &f32_3);
  const AllocResult r2 = Alloc(a, 2, 1000, &bf16_5x100);
  EXPECT_EQ(r1.size.value(), 4096u);
  EXPECT_EQ(r2.size.value(), 4096u);
  EXPECT_EQ(r1.offset.value(), 16 * kMiB - 4096);
  EXPECT_EQ(r2.offset.value(), 16 * kMiB - 8192);
  EXPECT_EQ(CounterValue(a, "padding_bytes"), 4084 + 3096);
  EXPECT_EQ(CounterValue(a, "padding_bytes_in_use"), 4084 + 3096);
  const std::vector<TpuBufferInfo> live = a.LiveBuffers();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].id.value(), 2u);  // equal sizes: lower address first
  EXPECT_EQ(live[0].requested.value(), 1000u);
  EXPECT_EQ(live[0].padded.value(), 4096u);
  EXPECT_EQ(FormatShape(*live[0].shape), "bf16[5,100]");
  a.Free(r1.handle);
  EXPECT_EQ(CounterValue(a, "padding_bytes"), 4084 + 3096);
  EXPECT_EQ(CounterValue(a, "padding_bytes_in_use"), 3096);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuPaddingTest, AbsurdRequestFailsAsOom) {
  TpuAllocator a(Options(16 * kMiB));
  const AllocResult r = Alloc(a, 1, Bytes::Max().value());
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.rounded, Bytes::Max());
  EXPECT_EQ(r.free_bytes.value(), 16 * kMiB);
  EXPECT_EQ(r.largest_free_block.value(), 16 * kMiB);
}

TEST(TpuPaddingTest, ZeroByteRequestReservesNothing) {
  TpuAllocator a(Options(16 * kMiB));
  const AllocResult r = Alloc(a, 1, 0);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.has_offset);
  EXPECT_EQ(r.handle, kNullHandle);
  a.Free(r.handle);
  EXPECT_EQ(a.GetStats().num_allocs, 0);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

}  // namespace
}  // namespace hbmsim::testing
