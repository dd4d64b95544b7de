// Analyze and Probe on a hand-built state: one 20 MiB cudaMalloc segment
// [in use 8 MiB][free 4 MiB][pending free 8 MiB] and one 2 MiB small segment
// [in use 512 B][free 2 MiB - 512 B], device of 64 MiB.
#include "sim/policies/torch/torch_state_analysis.h"

#include "gtest/gtest.h"
#include "sim/policies/torch/torch_probe.h"

namespace hbmsim::sim::torch {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kBase = 0x7f0000000000;

torch::TorchAllocator Seeded() {
  torch::TorchOptions o;
  o.capacity = Bytes(64 * kMiB);
  torch::TorchAllocator a(o);
  torch::SegmentSeed large;
  large.base = Offset(kBase);
  large.size = Bytes(20 * kMiB);
  large.blocks = {{Bytes(8 * kMiB), Bytes(8000000), BlockState::kInUse, BufferId(1)},
                  {Bytes(4 * kMiB), Bytes(), BlockState::kFree, BufferId()},
                  {Bytes(8 * kMiB), Bytes(8 * kMiB), BlockState::kPendingFree, BufferId(2)}};
  torch::SegmentSeed small;
  small.base = Offset(kBase + 32 * kMiB);
  small.size = Bytes(2 * kMiB);
  small.blocks = {{Bytes(512), Bytes(100), BlockState::kInUse, BufferId(3)},
                  {Bytes(2 * kMiB - 512), Bytes(), BlockState::kFree, BufferId()}};
  EXPECT_TRUE(a.SeedSegment(large).ok());
  EXPECT_TRUE(a.SeedSegment(small).ok());
  return a;
}

TEST(StateAnalysis, PoolsInPyTorchsTerms) {
  const torch::TorchAllocator a = Seeded();
  const StateAnalysis s = Analyze(a, 2);
  ASSERT_EQ(s.pools.size(), 2u);
  EXPECT_TRUE(s.pools[0].small);
  EXPECT_EQ(s.pools[0].reserved, Bytes(2 * kMiB));
  EXPECT_EQ(s.pools[0].allocated, Bytes(512));
  EXPECT_EQ(s.pools[0].inactive_split, Bytes(2 * kMiB - 512));
  EXPECT_EQ(s.pools[1].reserved, Bytes(20 * kMiB));
  EXPECT_EQ(s.pools[1].allocated, Bytes(8 * kMiB));
  EXPECT_EQ(s.pools[1].active, Bytes(16 * kMiB));  // the pending free block is still active
  EXPECT_EQ(s.pools[1].requested, Bytes(8000000 + 8 * kMiB));
  EXPECT_EQ(s.total.reserved, Bytes(22 * kMiB));
  EXPECT_EQ(s.total.free, Bytes(6 * kMiB - 512));
  EXPECT_EQ(s.total.largest_free, Bytes(4 * kMiB));
  EXPECT_EQ(s.total.free_blocks, 2u);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 4.0 * kMiB / (6.0 * kMiB - 512));
  EXPECT_EQ(s.releasable, Bytes());  // both segments are split
  ASSERT_EQ(s.biggest.size(), 2u);   // 8 MiB twice: address order
  EXPECT_EQ(s.biggest[0].addr, Offset(kBase));
  EXPECT_EQ(s.biggest[1].addr, Offset(kBase + 12 * kMiB));
  EXPECT_TRUE(s.biggest[1].pending_free);
}

TEST(StateAnalysis, ProbesRunOnACopy) {
  const torch::TorchAllocator a = Seeded();
  // 3 MiB: best fit is the 4 MiB block; 1 MiB would remain, not > 1 MiB: taken whole.
  ProbeAnswer p = Probe(a, Bytes(3 * kMiB), StreamId(0));
  ASSERT_TRUE(p.result.ok());
  EXPECT_EQ(p.how,
            "the cached free block at 0x7f0000800000 of 4194304 B, taken whole (1048576 B beyond the "
            "rounded request)");
  // 2 MiB + 1: splits it (rounded to 2 MiB + 512; 2 MiB - 512 remain).
  p = Probe(a, Bytes(2 * kMiB + 1), StreamId(0));
  EXPECT_EQ(p.how,
            "split the cached free block at 0x7f0000800000 of 4194304 B: 2097664 B taken, 2096640 B stay "
            "cached at 0x7f0000a00200");
  // 30 MiB: a new segment (64 - 22 MiB are free on the device).
  p = Probe(a, Bytes(30 * kMiB), StreamId(0));
  ASSERT_TRUE(p.result.ok());
  EXPECT_EQ(p.steps, std::vector<std::string>{"cudaMalloc: a new segment of 31457280 B at 0x0"});
  // 50 MiB: the device has 42 MiB left and nothing is releasable.
  p = Probe(a, Bytes(50 * kMiB), StreamId(0));
  EXPECT_FALSE(p.result.ok());
  // The ladder's release_cached_blocks completes the pending free first, so
  // only 8 MiB + 512 B stay active: 56 MiB free >= 50 MiB, not in one piece.
  EXPECT_EQ(AllocStatusName(p.result.status), "fragmentation");
  EXPECT_EQ(p.result.free_bytes, Bytes(56 * kMiB - 512));
  EXPECT_NE(
      p.oom_message.find("Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 64.00 MiB of which "
                         "42.00 MiB is free."),
      std::string::npos)
      << p.oom_message;
  // The state itself did not change.
  EXPECT_EQ(Analyze(a).total.reserved, Bytes(22 * kMiB));
}

}  // namespace
}  // namespace hbmsim::sim::torch
