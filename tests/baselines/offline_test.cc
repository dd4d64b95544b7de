// The offline planner (XLA's global decreasing-size best fit) and the
// allocator that replays its plan.
#include "allocator/baselines/offline_allocator.h"
#include "allocator/baselines/offline_planner.h"
#include "gtest/gtest.h"

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
