// round_size, get_allocation_size and the PYTORCH_CUDA_ALLOC_CONF parser.
#include "allocator/torch/torch_options.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::kMiB;

TorchOptions WithDivisions(uint64_t d) {
  TorchOptions o;
  o.roundup_power2_divisions.fill(d);
  return o;
}

TEST(RoundSize, PlainRoundingIsTo512WithA512Minimum) {
  const TorchOptions o;
  EXPECT_EQ(RoundSize(Bytes(1), o), Bytes(512));
  EXPECT_EQ(RoundSize(Bytes(511), o), Bytes(512));
  EXPECT_EQ(RoundSize(Bytes(512), o), Bytes(512));
  EXPECT_EQ(RoundSize(Bytes(513), o), Bytes(1024));
  EXPECT_EQ(RoundSize(Bytes(5000000), o), Bytes(5000192));
  EXPECT_EQ(RoundSize(Bytes(8519680), o), Bytes(8519680));
}

TEST(RoundSize, PowerOfTwoDivisionsFromTheReference) {
  // 5,000,000 B with d=4: floor 4 MiB, step 1 MiB, result 5 MiB.
  EXPECT_EQ(RoundSize(Bytes(5000000), WithDivisions(4)), Bytes(5 * kMiB));
  // A power of two is returned unchanged.
  EXPECT_EQ(RoundSize(Bytes(4 * kMiB), WithDivisions(4)), Bytes(4 * kMiB));
  // Below 2 MiB is bucket 0: 1.5e6 with d=2 steps by 512 KiB.
  EXPECT_EQ(RoundSize(Bytes(1500000), WithDivisions(2)), Bytes(1572864));
  // size <= 512*d keeps plain rounding: 2000 with d=4 (2048 limit).
  EXPECT_EQ(RoundSize(Bytes(2000), WithDivisions(4)), Bytes(2048));
  // d=1 is off.
  EXPECT_EQ(RoundSize(Bytes(5000000), WithDivisions(1)), Bytes(5000192));
  // 20 MiB + 1 with d=8: floor 16 MiB, step 2 MiB.
  EXPECT_EQ(RoundSize(Bytes(20 * kMiB + 1), WithDivisions(8)), Bytes(22 * kMiB));
}

TEST(RoundSize, BucketsStartAtOneMebibyteAndClampAt15) {
  EXPECT_EQ(RoundupBucket(1), 0);
  EXPECT_EQ(RoundupBucket(2 * kMiB - 1), 0);
  EXPECT_EQ(RoundupBucket(2 * kMiB), 1);
  EXPECT_EQ(RoundupBucket(3 * kMiB), 1);
  EXPECT_EQ(RoundupBucket(4 * kMiB), 2);
  EXPECT_EQ(RoundupBucket(32ull << 30), 15);
  EXPECT_EQ(RoundupBucket(1ull << 40), 15);
  TorchOptions o;
  o.roundup_power2_divisions[2] = 4;  // only [4 MiB, 8 MiB)
  EXPECT_EQ(RoundSize(Bytes(5000000), o), Bytes(5 * kMiB));
  EXPECT_EQ(RoundSize(Bytes(9000000), o), Bytes(9000448));
}

TEST(AllocationSize, SegmentSizesFollowTheRoundedRequest) {
  const TorchOptions o;
  EXPECT_EQ(AllocationSize(Bytes(512), o), Bytes(2 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(kMiB), o), Bytes(2 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(kMiB + 512), o), Bytes(20 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(10 * kMiB - 512), o), Bytes(20 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(10 * kMiB), o), Bytes(10 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(10 * kMiB + 512), o), Bytes(12 * kMiB));
  EXPECT_EQ(AllocationSize(Bytes(536870912), o), Bytes(536870912));
  TorchOptions big;
  big.large_segment_size = Bytes(40 * kMiB);
  EXPECT_EQ(AllocationSize(Bytes(3 * kMiB), big), Bytes(40 * kMiB));
  EXPECT_TRUE(IsSmallSize(Bytes(kMiB)));
  EXPECT_FALSE(IsSmallSize(Bytes(kMiB + 512)));
}

TEST(ParseAllocConf, ScalarKeys) {
  auto d = ParseAllocConf(" expandable_segments:True, max_split_size_mb : 128 ,max_non_split_rounding_mb:64");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->expandable_segments, true);
  EXPECT_EQ(d->max_split_size, Bytes(128 * kMiB));
  EXPECT_EQ(d->max_non_split_rounding, Bytes(64 * kMiB));
  EXPECT_FALSE(d->garbage_collection_threshold.has_value());
  TorchOptions o;
  ApplyConfDelta(*d, o);
  EXPECT_TRUE(o.expandable_segments);
  EXPECT_EQ(o.max_split_size, Bytes(128 * kMiB));
  EXPECT_EQ(o.large_segment_size, Bytes(20 * kMiB));
}

TEST(ParseAllocConf, GcFractionBackendAndIgnoredKeys) {
  auto d = ParseAllocConf(
      "garbage_collection_threshold:0.6,per_process_memory_fraction:0.5,backend:native,"
      "release_lock_on_cudamalloc:True,pinned_num_register_threads:8,large_segment_size_mb:40");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->garbage_collection_threshold, 0.6);
  EXPECT_EQ(d->per_process_memory_fraction, 0.5);
  EXPECT_EQ(d->large_segment_size, Bytes(40 * kMiB));
  EXPECT_TRUE(ParseAllocConf("").ok());
}

TEST(ParseAllocConf, RoundupSingleValueAndList) {
  auto single = ParseAllocConf("roundup_power2_divisions:4");
  ASSERT_TRUE(single.ok());
  for (uint64_t v : *single->roundup_power2_divisions) EXPECT_EQ(v, 4u);
  // The first entry fills the buckets below it; `>` starts at the previous
  // entry's bucket (PyTorch's quirk), so bucket 9 (512 MiB) ends up 8, not 2.
  auto list = ParseAllocConf("roundup_power2_divisions:[256:1,512:2,>:8]");
  ASSERT_TRUE(list.ok()) << list.status();
  const std::array<uint64_t, 16> want = {1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 8, 8, 8, 8, 8, 8};
  EXPECT_EQ(*list->roundup_power2_divisions, want);
  auto plain = ParseAllocConf("roundup_power2_divisions:[1:4,64:0,128:2],expandable_segments:False");
  ASSERT_TRUE(plain.ok()) << plain.status();
  const std::array<uint64_t, 16> want2 = {4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(*plain->roundup_power2_divisions, want2);
  EXPECT_EQ(plain->expandable_segments, false);
}

std::string Error(std::string_view conf) {
  auto d = ParseAllocConf(conf);
  return d.ok() ? "ok" : std::string(d.status().message());
}

TEST(ParseAllocConf, PyTorchsErrorTexts) {
  EXPECT_EQ(Error("foo:1"), "Unrecognized key 'foo' in CUDA allocator config.");
  EXPECT_EQ(Error("max_split_size_mb:19"),
            "CachingAllocator option max_split_size_mb too small, must be >= 20");
  EXPECT_EQ(Error("max_non_split_rounding_mb:10"),
            "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20");
  EXPECT_EQ(Error("max_split_size_mb"),
            "Error parsing CachingAllocator::AllocatorConfig settings, expected :");
  EXPECT_EQ(Error("max_split_size_mb:"), "Error, expecting max_split_size_mb value");
  EXPECT_EQ(Error("max_split_size_mb:20:"),
            "Error parsing CachingAllocator::AllocatorConfig settings, expected ,");
  EXPECT_EQ(Error("max_split_size_mb:lots"),
            "Invalid value 'lots' for CachingAllocator option max_split_size_mb");
  EXPECT_EQ(Error("garbage_collection_threshold:1.5"),
            "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  EXPECT_EQ(Error("garbage_collection_threshold:0"),
            "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  EXPECT_EQ(Error("expandable_segments:true"),
            "Expected a single True/False argument for expandable_segments");
  EXPECT_EQ(Error("roundup_power2_divisions:3"), "For roundups, the divisons has to be power of 2 ");
  EXPECT_EQ(Error("roundup_power2_divisions:[256:3]"),
            "For roundups, the divisons has to be power of 2 or 0 to disable roundup ");
  EXPECT_EQ(Error("roundup_power2_divisions:[100:2]"), "For roundups, the intervals have to be power of 2 ");
  EXPECT_EQ(Error("roundup_power2_divisions:[256:2"),
            "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
  EXPECT_EQ(Error("roundup_power2_divisions:[256]"),
            "Error parsing CachingAllocator::AllocatorConfig settings, expected :");
  EXPECT_EQ(Error("backend:cudaMallocAsync"),
            "Unknown allocator backend, options are native and cudaMallocAsync (the torch policy models "
            "native only)");
  EXPECT_EQ(Error("per_process_memory_fraction:1.5"), "invalid fraction:1.5. Please set within (0, 1).");
}

}  // namespace
}  // namespace hbmsim::allocator::torch
