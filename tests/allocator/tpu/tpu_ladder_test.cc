// Scenarios for buffer placement and each rung of the recovery ladder, with
// the exact addresses, counters and texts the model fixes.
#include "allocator/tpu/tpu_allocator.h"
#include "allocator/tpu/tpu_messages.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

// Ten 1 MiB buffers fill a 10 MiB HBM top-down; ids 2, 4, ..., 10 are freed,
// leaving five 1 MiB holes at 8, 6, 4, 2 and 0 MiB.
void FillAndFreeEverySecond(TpuAllocator& a) {
  std::vector<Handle> handles;
  for (uint64_t id = 1; id <= 10; ++id) {
    const AllocResult r = Alloc(a, id, kMiB);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.offset.value(), (10 - id) * kMiB);
    handles.push_back(r.handle);
  }
  for (uint64_t id = 2; id <= 10; id += 2) a.Free(handles[id - 1]);
}

TEST(TpuLadderTest, BuffersTakeTheTopOfTheSmallestFittingBlock) {
  TpuAllocator a(Options(8 * kMiB));
  std::vector<Handle> h;
  for (uint64_t id = 1; id <= 6; ++id) h.push_back(Alloc(a, id, kMiB).handle);  // 7M..2M
  a.Free(h[1]);                                                                 // hole [6M,7M)
  a.Free(h[3]);                                                                 // hole [4M,5M)
  // Free blocks: [0,2M) 2 MiB, [4M,5M) and [6M,7M) 1 MiB each.
  EXPECT_EQ(Alloc(a, 7, 512 * kKiB).offset.value(), 6 * kMiB + 512 * kKiB);  // equal sizes: highest
  EXPECT_EQ(Alloc(a, 8, kMiB).offset.value(), 4 * kMiB);                     // the exact fit
  EXPECT_EQ(Alloc(a, 9, kMiB).offset.value(), kMiB);                         // top of [0,2M)
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLadderTest, IssueExampleDefragmentationMovesFourMiB) {
  TpuAllocator a(Options(10 * kMiB));
  FillAndFreeEverySecond(a);
  const AllocResult r = Alloc(a, 11, 2 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 3 * kMiB);
  EXPECT_EQ(a.counters().defragmentations, 1);
  EXPECT_EQ(a.counters().buffers_moved, 4);
  EXPECT_EQ(a.counters().bytes_moved, int64_t{4 * kMiB});
  EXPECT_EQ(a.counters().queued_free_waits, 0);
  EXPECT_EQ(a.counters().programs_evicted, 0);
  const std::map<uint64_t, uint64_t> expected = {{1, 9 * kMiB}, {3, 8 * kMiB}, {5, 7 * kMiB},
                                                 {7, 6 * kMiB}, {9, 5 * kMiB}, {11, 3 * kMiB}};
  EXPECT_EQ(AddressesById(a), expected);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, int64_t{3 * kMiB});
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLadderTest, WithoutDefragmentationTheSameRequestIsAFragmentationFailure) {
  TpuOptions o = Options(10 * kMiB);
  o.defragment = false;
  TpuAllocator a(o);
  FillAndFreeEverySecond(a);
  const AllocResult r = Alloc(a, 11, 2 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.rounded.value(), 2 * kMiB);
  EXPECT_EQ(r.free_bytes.value(), 5 * kMiB);
  EXPECT_EQ(r.largest_free_block.value(), kMiB);
  EXPECT_EQ(a.counters().defragmentations, 0);
  EXPECT_EQ(FormatBufferAllocationError(r.rounded, r.free_bytes),
            "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 2.00M. That was not "
            "possible. There are 5.00M free.; (0x0x1_HBM0)");
}

TEST(TpuLadderTest, OomReportsGooglesSampleNumbers) {
  TpuAllocator a(Options(10 * kMiB));
  ASSERT_TRUE(Alloc(a, 1, 3748352).ok());  // leaves 6737408 B = 6.43M
  const AllocResult r = Alloc(a, 2, 8 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes.value(), 6737408u);
  EXPECT_EQ(r.largest_free_block.value(), 6737408u);
  EXPECT_EQ(a.counters().defragmentations, 0);  // rung 2 skips an oom
  EXPECT_EQ(FormatBufferAllocationError(r.rounded, r.free_bytes),
            "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not "
            "possible. There are 6.43M free.; (0x0x1_HBM0)");
}

// Two 2 MiB buffers fill 4 MiB; the first is released through a queued free.
struct QueuedScenario {
  Handle first;
  Handle second;
};
QueuedScenario FillWithQueuedFree(TpuAllocator& a) {
  const AllocResult first = Alloc(a, 1, 2 * kMiB);
  const AllocResult second = Alloc(a, 2, 2 * kMiB);
  EXPECT_EQ(first.offset.value(), 2 * kMiB);
  EXPECT_EQ(second.offset.value(), 0u);
  a.RequestFree(first.handle);
  return {first.handle, second.handle};
}

TEST(TpuLadderTest, QueuedFreeRetryRescuesAndALateCompletionIsANoOp) {
  TpuAllocator a(Options(4 * kMiB));
  const QueuedScenario s = FillWithQueuedFree(a);
  EXPECT_EQ(a.GetStats().bytes_in_use, int64_t{4 * kMiB});  // held until completed
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, int64_t{2 * kMiB});
  const AllocResult r = Alloc(a, 3, 2 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 2 * kMiB);
  EXPECT_NE(r.handle, s.first);  // handles are never recycled
  EXPECT_EQ(a.counters().queued_free_waits, 1);
  EXPECT_EQ(a.counters().queued_frees_completed, 1);
  a.CompleteFree(s.first);  // the ladder already completed it
  EXPECT_EQ(a.GetStats().bytes_in_use, int64_t{4 * kMiB});
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{{2, 0}, {3, 2 * kMiB}}));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLadderTest, WithoutQueuedFreeRetryQueuedMemoryIsNotFree) {
  TpuOptions o = Options(4 * kMiB);
  o.queued_free_retry = false;
  TpuAllocator a(o);
  const QueuedScenario s = FillWithQueuedFree(a);
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 0);
  const AllocResult r = Alloc(a, 3, 2 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes.value(), 0u);
  EXPECT_EQ(a.counters().queued_free_waits, 0);
  EXPECT_EQ(FormatBufferAllocationError(r.rounded, r.free_bytes),
            "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 2.00M. That was not "
            "possible. There are 0B free.; (0x0x1_HBM0)");
  a.CompleteFree(s.first);
  EXPECT_TRUE(Alloc(a, 4, 2 * kMiB).ok());
}

TEST(TpuLadderTest, LargestRequestFollowsTheEnabledRungs) {
  // [0,1M) free, [1M,2M) buffer, [2M,4M) queued free.
  auto build = [](bool queued_free_retry, bool defragment) {
    TpuOptions o = Options(4 * kMiB);
    o.queued_free_retry = queued_free_retry;
    o.defragment = defragment;
    auto a = std::make_unique<TpuAllocator>(o);
    const AllocResult first = Alloc(*a, 1, 2 * kMiB);
    EXPECT_TRUE(Alloc(*a, 2, kMiB).ok());
    a->RequestFree(first.handle);
    return a;
  };
  EXPECT_EQ(build(true, true)->GetStats().largest_free_block_bytes, int64_t{3 * kMiB});  // compacted
  EXPECT_EQ(build(true, false)->GetStats().largest_free_block_bytes, int64_t{2 * kMiB});
  EXPECT_EQ(build(false, true)->GetStats().largest_free_block_bytes, int64_t{kMiB});  // queued free is pinned
  EXPECT_EQ(CounterValue(*build(true, true), "largest_contiguous_free_block_bytes"), int64_t{kMiB});
}

// Programs p1 and p2 (2 MiB each) at 0 and 2 MiB, p2 run last, a 4 MiB
// buffer on top: HBM (8 MiB) is full.
void FillWithPrograms(TpuAllocator& a) {
  ASSERT_EQ(a.LoadProgram(ProgramId(1), Bytes(2 * kMiB), EventIndex(0)).offset.value(), 0u);
  ASSERT_EQ(a.LoadProgram(ProgramId(2), Bytes(2 * kMiB), EventIndex(1)).offset.value(), 2 * kMiB);
  ASSERT_TRUE(a.RunProgram(ProgramId(1), EventIndex(2)).ok);
  ASSERT_TRUE(a.RunProgram(ProgramId(2), EventIndex(3)).ok);
  ASSERT_EQ(Alloc(a, 10, 4 * kMiB).offset.value(), 4 * kMiB);
}

TEST(TpuLadderTest, EvictionRescuesAndSparesTheLastRunProgram) {
  TpuAllocator a(Options(8 * kMiB));
  FillWithPrograms(a);
  EXPECT_EQ(a.GetStats().bytes_reserved, int64_t{4 * kMiB});
  EXPECT_EQ(a.GetStats().bytes_reservable_limit, int64_t{4 * kMiB});
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, int64_t{2 * kMiB});  // p1 may go
  const AllocResult r = Alloc(a, 11, 2 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 1);
  ASSERT_EQ(a.ResidentPrograms().size(), 1u);
  EXPECT_EQ(a.ResidentPrograms()[0].id.value(), 2u);
  EXPECT_TRUE(a.ResidentPrograms()[0].protected_from_eviction);
  const AllocResult again = Alloc(a, 12, 2 * kMiB);  // only p2 is left, and it ran last
  EXPECT_EQ(again.status, AllocStatus::kOom);
  EXPECT_EQ(again.free_bytes.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 1);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLadderTest, WithoutEvictionProgramsStayAndTheRequestFails) {
  TpuOptions o = Options(8 * kMiB);
  o.evict_programs = false;
  TpuAllocator a(o);
  FillWithPrograms(a);
  const AllocResult r = Alloc(a, 11, 2 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes.value(), 0u);
  EXPECT_EQ(r.largest_free_block.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 0);
  EXPECT_EQ(a.GetStats().bytes_reserved, int64_t{4 * kMiB});
}

TEST(TpuLadderTest, EvictionThenCompactionWhenThatMakesTheRequestFit) {
  TpuAllocator a(Options(8 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(2 * kMiB), EventIndex(0)).ok);
  std::vector<Handle> h;
  for (uint64_t id = 1; id <= 6; ++id) h.push_back(Alloc(a, id, kMiB).handle);  // 7M..2M
  a.Free(h[5]);                                                                 // [2M,3M)
  a.Free(h[3]);                                                                 // [4M,5M)
  const AllocResult r = Alloc(a, 7, 4 * kMiB);  // 2 MiB free: oom until p1 goes
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 1);
  EXPECT_EQ(a.counters().defragmentations, 1);
  EXPECT_EQ(a.counters().buffers_moved, 1);
  EXPECT_EQ(a.counters().bytes_moved, int64_t{kMiB});
  EXPECT_EQ(AddressesById(a), (std::map<uint64_t, uint64_t>{
                                  {1, 7 * kMiB}, {2, 6 * kMiB}, {3, 5 * kMiB}, {5, 4 * kMiB}, {7, 0}}));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TpuLadderTest, EvictionCompactsOnlyWhenThatMakesTheRequestFit) {
  TpuAllocator a(Options(8 * kMiB));
  ASSERT_TRUE(a.LoadProgram(ProgramId(1), Bytes(kMiB), EventIndex(0)).ok);      // [0,1M), older
  ASSERT_TRUE(a.LoadProgram(ProgramId(2), Bytes(2 * kMiB), EventIndex(1)).ok);  // [1M,3M)
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(Alloc(a, id, kMiB).ok());    // 7M..3M
  // Evicting p1 frees [0,1M), and no compaction could make 3 MiB out of it
  // (p2 pins [1M,3M)): nothing moves until p2 goes too.
  const AllocResult r = Alloc(a, 6, 3 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.offset.value(), 0u);
  EXPECT_EQ(a.counters().programs_evicted, 2);
  EXPECT_EQ(a.counters().defragmentations, 0);
  EXPECT_TRUE(a.ResidentPrograms().empty());
}

TEST(TpuLadderTest, EvictionOrderLruVersusLargestFirst) {
  auto run = [](EvictionOrder order) {
    TpuOptions o = Options(4 * kMiB);
    o.eviction_order = order;
    auto a = std::make_unique<TpuAllocator>(o);
    EXPECT_TRUE(a->LoadProgram(ProgramId(1), Bytes(kMiB), EventIndex(0)).ok);      // [0,1M), older
    EXPECT_TRUE(a->LoadProgram(ProgramId(2), Bytes(2 * kMiB), EventIndex(1)).ok);  // [1M,3M)
    EXPECT_EQ(Alloc(*a, 1, kMiB).offset.value(), 3 * kMiB);
    const AllocResult r = Alloc(*a, 2, kMiB);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(a->counters().programs_evicted, 1);
    EXPECT_TRUE(a->CheckInvariants().ok());
    return std::make_pair(r.offset.value(), a->ResidentPrograms().at(0).id.value());
  };
  EXPECT_EQ(run(EvictionOrder::kLru), std::make_pair(uint64_t{0}, uint64_t{2}));
  EXPECT_EQ(run(EvictionOrder::kLargestFirst), std::make_pair(2 * kMiB, uint64_t{1}));
}

class RecordingObserver : public PolicyObserver {
 public:
  void OnPolicyEvent(const PolicyEvent& e) override {
    lines.push_back(
        fmt::format("{} {} {} {}", PolicyEventKindName(e.kind), e.bytes.value(), e.offset.value(), e.detail));
  }
  std::vector<std::string> lines;
};

TEST(TpuLadderTest, EachRescueIsReportedToTheObserver) {
  TpuAllocator a(Options(10 * kMiB));
  RecordingObserver observer;
  a.set_observer(&observer);
  FillAndFreeEverySecond(a);
  a.RequestFree(Alloc(a, 11, kMiB).handle);  // takes the hole at 8 MiB, then queued
  ASSERT_TRUE(Alloc(a, 12, 2 * kMiB).ok());
  EXPECT_EQ(observer.lines,
            (std::vector<std::string>{"queued_free_wait 1048576 0 1", "defragmentation 4194304 0 4"}));
}

}  // namespace
}  // namespace hbmsim::testing
