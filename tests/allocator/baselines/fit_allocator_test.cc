// first_fit and best_fit: placements worked out by hand, failures with their
// two numbers, and random programs under the invariant checker.
#include "allocator/baselines/fit_allocator.h"

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"

namespace hbmsim {
namespace {

constexpr uint64_t K = 1024;

AllocResult Alloc(Allocator& a, uint64_t id, uint64_t bytes) {
  AllocRequest r;
  r.id = BufferId(id);
  r.bytes = Bytes(bytes);
  return a.Allocate(r);
}

// 2K | 1K | 1K | 1K, then the 2K and the third block are freed: holes of 2K
// at 0 and of 1K at 3K, and the tail from 5K.
void MakeTwoHoles(Allocator& a) {
  const Handle h1 = Alloc(a, 1, 2 * K).handle;
  Alloc(a, 2, K);
  const Handle h3 = Alloc(a, 3, K).handle;
  Alloc(a, 4, K);
  a.Free(h1);
  a.Free(h3);
}

TEST(FitAllocatorTest, FirstFitTakesTheLowestHoleAndThenNeedsTheTail) {
  FitAllocator a({Bytes(8 * K), 256, FitStrategy::kFirstFit});
  MakeTwoHoles(a);
  EXPECT_EQ(Alloc(a, 5, K).offset.value(), 0u);  // the 2K hole, split
  const AllocResult r = Alloc(a, 6, 2 * K);      // holes of 1K at 1K and 3K: the tail
  EXPECT_EQ(r.offset.value(), 5 * K);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(FitAllocatorTest, BestFitTakesTheExactHoleAndKeepsTheLargeOne) {
  FitAllocator a({Bytes(8 * K), 256, FitStrategy::kBestFit});
  MakeTwoHoles(a);
  EXPECT_EQ(Alloc(a, 5, K).offset.value(), 3 * K);
  EXPECT_EQ(Alloc(a, 6, 2 * K).offset.value(), 0u);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, static_cast<int64_t>(3 * K));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(FitAllocatorTest, AFailureSaysFragmentationWhenFreeBytesSufficeButNoRangeDoes) {
  FitAllocator a({Bytes(5 * K), 256, FitStrategy::kFirstFit});
  MakeTwoHoles(a);  // free: 2K at 0, 1K at 3K; no tail
  const AllocResult r = Alloc(a, 5, 3 * K);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.free_bytes.value(), 3 * K);
  EXPECT_EQ(r.largest_free_block.value(), 2 * K);
  const AllocResult oom = Alloc(a, 6, 4 * K);
  EXPECT_EQ(oom.status, AllocStatus::kOom);
}

TEST(FitAllocatorTest, RoundsToTheAlignmentAndTheRegionIsTheLimitRoundedDown) {
  FitAllocator a({Bytes(1000), 256, FitStrategy::kBestFit});
  EXPECT_EQ(a.GetStats().pool_bytes, 768);
  const AllocResult r = Alloc(a, 1, 1);
  EXPECT_EQ(r.size.value(), 256u);
  EXPECT_EQ(Alloc(a, 2, 513).status, AllocStatus::kOom);  // 768 rounded, 512 free
  EXPECT_EQ(a.name(), "best_fit");
}

TEST(FitAllocatorTest, FreeingNeighboursCoalescesEagerly) {
  FitAllocator a({Bytes(4 * K), 256, FitStrategy::kFirstFit});
  const Handle x = Alloc(a, 1, K).handle;
  const Handle y = Alloc(a, 2, K).handle;
  a.Free(x);
  a.Free(y);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, static_cast<int64_t>(4 * K));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(FitAllocatorTest, RandomProgramsKeepTheInvariants) {
  for (FitStrategy s : {FitStrategy::kFirstFit, FitStrategy::kBestFit}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      FitAllocator a({Bytes::MiB(512), 256, s});
      testing::ProgramShape shape;
      shape.num_ops = 1500;
      shape.queued_free_fraction = 0.2;
      const testing::RunOutcome out = testing::RunProgram(a, testing::GenerateProgram(seed, shape));
      EXPECT_TRUE(out.invariants.ok()) << "seed " << seed << ": " << out.invariants.message();
    }
  }
}

}  // namespace
}  // namespace hbmsim
