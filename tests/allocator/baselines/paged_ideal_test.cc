// paged and ideal: page accounting and the compacted ideal heap, by hand.
#include "allocator/baselines/ideal_allocator.h"
#include "allocator/baselines/paged_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"

namespace hbmsim {
namespace {

AllocResult AllocBytes(Allocator& a, uint64_t id, uint64_t bytes) {
  AllocRequest r;
  r.id = BufferId(id);
  r.bytes = Bytes(bytes);
  return a.Allocate(r);
}

TEST(PagedAllocatorTest, RequestsTakeWholePagesAndTheTailOfTheLastIsWasted) {
  PagedAllocator a({Bytes::MiB(7), uint64_t{2} << 20});  // 3 pages; the last MiB is unusable
  const AllocResult r = AllocBytes(a, 1, 3 << 20);
  EXPECT_EQ(r.size.value(), uint64_t{4} << 20);
  EXPECT_EQ(a.GetStats().bytes_in_use, 4 << 20);
  const AllocResult fail = AllocBytes(a, 2, (2 << 20) + 1);  // two pages, one free
  EXPECT_EQ(fail.status, AllocStatus::kOom);
  EXPECT_EQ(fail.free_bytes.value(), uint64_t{2} << 20);
  EXPECT_EQ(fail.largest_free_block.value(), uint64_t{2} << 20);
  EXPECT_TRUE(AllocBytes(a, 3, 1).ok());
}

TEST(PagedAllocatorTest, PagesAreFungibleSoFreedPagesAnywhereServeALargeRequest) {
  PagedAllocator a({Bytes::MiB(8), uint64_t{2} << 20});
  std::vector<Handle> h;
  for (uint64_t i = 0; i < 4; ++i) h.push_back(AllocBytes(a, i, 2 << 20).handle);
  a.Free(h[0]);
  a.Free(h[2]);  // two free pages, not adjacent in any sense
  const AllocResult r = AllocBytes(a, 9, 4 << 20);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(a.GetStats().pool_bytes, 8 << 20);  // mapped pages stay mapped
  EXPECT_EQ(a.GetStats().peak_pool_bytes, 8 << 20);
  EXPECT_TRUE(a.CheckInvariants().ok());
  Counters c;
  a.AppendCounters(c);
  EXPECT_EQ(c, (Counters{{"pages_total", 4}, {"pages_mapped", 4}, {"pages_used", 4}}));
}

TEST(PagedAllocatorTest, RandomProgramsKeepTheInvariants) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    PagedAllocator a({Bytes::GiB(1), uint64_t{2} << 20});
    testing::ProgramShape shape;
    shape.num_ops = 1500;
    const testing::RunOutcome out = testing::RunProgram(a, testing::GenerateProgram(seed, shape));
    EXPECT_TRUE(out.invariants.ok()) << out.invariants.message();
  }
}

TEST(IdealAllocatorTest, FitsExactlyWhileLiveBytesStayWithinTheLimit) {
  IdealAllocator a(Bytes(1000));
  const Handle x = AllocBytes(a, 1, 600).handle;
  EXPECT_EQ(AllocBytes(a, 2, 300).offset.value(), 600u);
  const AllocResult fail = AllocBytes(a, 3, 101);
  EXPECT_EQ(fail.status, AllocStatus::kOom);
  EXPECT_EQ(fail.free_bytes.value(), 100u);
  a.Free(x);
  const AllocResult r = AllocBytes(a, 4, 700);  // 300 + 700 == 1000: fits exactly
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 300u);  // the heap was compacted: id 2 slid to 0
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 0);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(IdealAllocatorTest, RandomProgramsKeepTheInvariants) {
  IdealAllocator a(Bytes::GiB(1));
  const testing::RunOutcome out =
      testing::RunProgram(a, testing::GenerateProgram(7, testing::ProgramShape{}));
  EXPECT_TRUE(out.invariants.ok()) << out.invariants.message();
}

}  // namespace
}  // namespace hbmsim
