// The offline planner (XLA's global decreasing-size best fit) and the
// allocator that replays its plan.
#include "allocator/baselines/offline_allocator.h"
#include "allocator/baselines/offline_planner.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

constexpr uint64_t M = 1 << 20;

// a = 1M live [0,2), b = 1M live [1,∞), c = 2M live [3,∞): an online
// allocator puts a at 0 and b at 1M, so after a's free c finds a 1M hole and
// goes to 2M (heap 4M). Knowing the future, c goes first at 0, b above it at
// 2M, and a fits under b at 0 since it dies before c is born (heap 3M).
std::vector<BufferInterval> ThreeBuffers() {
  return {{0, M, 0, 2}, {1, M, 1, UINT64_MAX}, {3, 2 * M, 3, UINT64_MAX}};
}

TEST(OfflinePlannerTest, SpatialOrderPlacesLargestFirstAndReusesSpaceAcrossTime) {
  const OfflinePlan p = PlanWithOrder(ThreeBuffers(), 256, PackingOrder::kSpatial);
  EXPECT_EQ(p.heap_size, 3 * M);
  EXPECT_EQ(p.Find(3)->offset, 0u);
  EXPECT_EQ(p.Find(1)->offset, 2 * M);
  EXPECT_EQ(p.Find(0)->offset, 0u);
  EXPECT_EQ(p.Find(2), nullptr);
}

TEST(OfflinePlannerTest, TemporalOrderPlacesLongestLivedFirst) {
  // Lifetimes: b (from 1) is longer than c (from 3): b at 0, c at 1M, a above b.
  const OfflinePlan p = PlanWithOrder(ThreeBuffers(), 256, PackingOrder::kTemporal);
  EXPECT_EQ(p.Find(1)->offset, 0u);
  EXPECT_EQ(p.Find(3)->offset, M);
  EXPECT_EQ(p.Find(0)->offset, M);
  EXPECT_EQ(p.heap_size, 3 * M);
}

TEST(OfflinePlannerTest, KeepsTheSmallerHeapOfBothOrders) {
  // Spatial order stacks the two big short-lived buffers under the long small
  // one at 0..2M, then the small one above: 2M + 1M. Temporal order puts the
  // long small one at 0 and both big ones above it: 1M + 2M. A tie keeps spatial.
  const std::vector<BufferInterval> v = {{0, 2 * M, 0, 1}, {1, M, 1, UINT64_MAX}, {2, 2 * M, 2, 3}};
  const OfflinePlan p = PlanOffline(v, 256);
  EXPECT_EQ(p.spatial_heap_size, 3 * M);
  EXPECT_EQ(p.temporal_heap_size, 3 * M);
  EXPECT_EQ(p.order, PackingOrder::kSpatial);
}

TEST(OfflinePlannerTest, BothOrdersPlaceFourBuffersAsWorkedByHand) {
  // Buffer 0 (3M) and 1 (2M) never overlap; 2 (1M) lives throughout; 3 (2M)
  // overlaps 1 and 2.
  const std::vector<BufferInterval> v = {{0, 3 * M, 0, 2}, {1, 2 * M, 2, 5}, {2, M, 0, 9}, {3, 2 * M, 3, 6}};
  // Spatial: 0(3M)@0; 1(2M) overlaps none placed (0 ends at 2) -> @0;
  // 3(2M) overlaps 1 -> @2M; 2(1M) overlaps all: busy 0..3M, 0..2M, 2M..4M -> @4M. heap 5M.
  // Temporal (lifetimes 9,3,3,2): 2@0; 1 (len 3, 2M) @1M; 3 (len 3) overlaps 2,1 -> @3M;
  // 0 (len 2) overlaps 2 -> best gap above: @1M. heap 5M.
  const OfflinePlan s = PlanWithOrder(v, 256, PackingOrder::kSpatial);
  const OfflinePlan t = PlanWithOrder(v, 256, PackingOrder::kTemporal);
  EXPECT_EQ(s.heap_size, 5 * M);
  EXPECT_EQ(s.Find(2)->offset, 4 * M);
  EXPECT_EQ(t.heap_size, 5 * M);
  EXPECT_EQ(t.Find(3)->offset, 3 * M);
  EXPECT_EQ(t.Find(0)->offset, M);
}

// XLA's rules, worked by hand at alignment 128. Buffers (key = XLA's value
// id): 0 = 100 B [0,4), 1 = 100 B [2,6), 2 = 300 B [3,5), 3 = 40 B [5,9).
// Spatial order: 2 (300) first; 0 and 1 tie on size and duration (4): XLA
// takes the lower key, 0, not the earlier start (hbmsim's rule, also 0 here);
// 3 last. 2@0; 0 overlaps 2 -> the free chunk starts at RoundUp(300)=384;
// 1 overlaps 2 and 0: 0 ends at 484 -> 512; 3 overlaps 1 only -> below it,
// [0,512) holds 40 B at 0. Heap = 512 + 100 = 612, unrounded.
TEST(OfflinePlannerTest, XlaRulesAlignChunkStartsNotSizes) {
  const std::vector<BufferInterval> v = {{0, 100, 0, 4}, {1, 100, 2, 6}, {2, 300, 3, 5}, {3, 40, 5, 9}};
  const OfflinePlan x = PlanWithOrder(v, 128, PackingOrder::kSpatial, PlannerRules::kXla);
  EXPECT_EQ(x.Find(2)->offset, 0u);
  EXPECT_EQ(x.Find(0)->offset, 384u);
  EXPECT_EQ(x.Find(1)->offset, 512u);
  EXPECT_EQ(x.Find(3)->offset, 0u);
  EXPECT_EQ(x.heap_size, 612u);
  // hbmsim's rules round every size to 128 first: 2 is 384 B, 0 and 1 128 B: 0@384, 1@512, heap 640.
  const OfflinePlan h = PlanWithOrder(v, 128, PackingOrder::kSpatial);
  EXPECT_EQ(h.Find(1)->offset, 512u);
  EXPECT_EQ(h.heap_size, 640u);
}

// The tie-breaks: a (key 0) lives [4,6), b (key 1) [3,5); same size and
// duration, and they overlap. XLA: the lower key first, a@0, b@128.
// hbmsim: the earlier start first, b@0, a@128.
TEST(OfflinePlannerTest, XlaRulesBreakTiesOnTheKeyNotTheStart) {
  const std::vector<BufferInterval> v = {{0, 50, 4, 6}, {1, 50, 3, 5}};
  const OfflinePlan x = PlanOffline(v, 128, PlannerRules::kXla);
  EXPECT_EQ(x.Find(0)->offset, 0u);
  EXPECT_EQ(x.Find(1)->offset, 128u);
  EXPECT_EQ(x.heap_size, 178u);
  const OfflinePlan h = PlanOffline(v, 128);
  EXPECT_EQ(h.Find(1)->offset, 0u);
  EXPECT_EQ(h.Find(0)->offset, 128u);
  EXPECT_EQ(h.heap_size, 256u);
}

// Spatial order under XLA's rules sorts a group by its first value's duration
// (first_end), temporal by the whole group's: c (key 0) is a group [0,10)
// whose first value ends at 2; d (key 1) lives [1,6). Same size. Spatial:
// d (duration 5) before c (2): d@0, c@128. Temporal: c (10) first: c@0, d@128.
TEST(OfflinePlannerTest, XlaSpatialOrderUsesTheFirstValuesDuration) {
  BufferInterval c{0, 64, 0, 10};
  c.first_end = 2;
  const std::vector<BufferInterval> v = {c, {1, 64, 1, 6}};
  const OfflinePlan s = PlanWithOrder(v, 128, PackingOrder::kSpatial, PlannerRules::kXla);
  EXPECT_EQ(s.Find(1)->offset, 0u);
  EXPECT_EQ(s.Find(0)->offset, 128u);
  const OfflinePlan t = PlanWithOrder(v, 128, PackingOrder::kTemporal, PlannerRules::kXla);
  EXPECT_EQ(t.Find(0)->offset, 0u);
  EXPECT_EQ(t.Find(1)->offset, 128u);
}

TEST(OfflineAllocatorTest, ReplaysThePlanAndFailsOnlyWhenAPlannedBlockEndsPastTheLimit) {
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(ThreeBuffers(), 256));
  OfflineAllocator a(plan, Bytes(3 * M - 1));
  AllocRequest r;
  r.bytes = Bytes(M);
  r.event = EventIndex(0);
  const AllocResult ra = a.Allocate(r);
  r.event = EventIndex(1);
  const AllocResult rb = a.Allocate(r);  // planned at 2M..3M: past 3M-1
  EXPECT_TRUE(ra.ok());
  EXPECT_EQ(rb.status, AllocStatus::kFragmentation);
  EXPECT_EQ(rb.free_bytes.value(), 2 * M - 1);
  EXPECT_TRUE(a.CheckInvariants().ok());
  r.event = EventIndex(7);  // not in the plan
  EXPECT_EQ(a.Allocate(r).status, AllocStatus::kOom);
}

}  // namespace
}  // namespace hbmsim
