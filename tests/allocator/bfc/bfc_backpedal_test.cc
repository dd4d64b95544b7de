// A device that can refuse (BfcOptions::device_capacity): REF's backpedal in
// single precision (§1.7 step 4), the backpedal-once era, and GC releasing
// regions although the Extend after it fails (§1.9 step 4).
#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

constexpr uint64_t kWorkedLimit = 771293184;  // the first attempt of REF's worked example

BfcOptions WorkedExample(uint64_t capacity, bool once = false) {
  BfcOptions o = Limit(kWorkedLimit);
  o.device_capacity = Bytes(capacity);
  o.backpedal_once = once;
  return o;
}

int64_t DeviceFailures(const BfcAllocator& a) {
  Counters c;
  a.AppendCounters(c);
  EXPECT_EQ(c.back().name, "device_alloc_failures");
  return c.back().value;
}

TEST(BfcBackpedalTest, FollowsTheWorkedExampleOfTheReference) {
  // 771293184 refused, 694163968 refused, 624747776 refused, 562273024 fits.
  BfcAllocator a(WorkedExample(600000000));
  const AllocResult r = Alloc(a, 1, kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Map(a), "[0+562273024] U0+1048576 h0>1, F1048576+561224448 h1>-");
  EXPECT_EQ(DeviceFailures(a), 3);
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(562273024));
  // The Extend succeeded without doubling first, so curr doubles.
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(2 * kWorkedLimit));
  EXPECT_INVARIANTS(a);
}

TEST(BfcBackpedalTest, MultipliesInSinglePrecision) {
  // One step further: float gives 506045696 (double would give 506045952).
  BfcAllocator a(WorkedExample(550000000));
  ASSERT_TRUE(Alloc(a, 1, kMiB).ok());
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(506045696));
  EXPECT_EQ(DeviceFailures(a), 4);
}

TEST(BfcBackpedalTest, GivesUpBelowTheRequestAndRetriesOnTheNextExtend) {
  BfcAllocator a(WorkedExample(600000000));
  // 600 MiB = 629145600: 771293184 and 694163968 refused; 624747776 is below
  // the request, so the Extend fails. Free memory counts only what an Extend
  // could obtain: the largest request it would serve, 562273024.
  AllocResult r = Alloc(a, 1, 600 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(562273024));
  EXPECT_EQ(r.largest_free_block, Bytes(562273024));
  EXPECT_EQ(DeviceFailures(a), 2);
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(0));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(kWorkedLimit));
  // REF (2024) backpedals on every Extend: the next request gets a region.
  r = Alloc(a, 2, 562273024);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.size, Bytes(562273024));
  EXPECT_EQ(DeviceFailures(a), 5);
}

TEST(BfcBackpedalTest, OlderReleasesBackpedalOnlyOnce) {
  BfcAllocator a(WorkedExample(600000000, /*once=*/true));
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 562273024);
  EXPECT_EQ(Alloc(a, 1, 600 * kMiB).status, AllocStatus::kOom);  // spends the backpedal
  // Now every Extend must fit at its first size, which the device refuses.
  EXPECT_EQ(a.GetStats().largest_free_block_bytes, 0);
  const AllocResult r = Alloc(a, 2, kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(0));
  EXPECT_EQ(DeviceFailures(a), 3);
}

TEST(BfcBackpedalTest, FirstBackpedalSucceedingSpendsTheOnceFlagToo) {
  BfcAllocator a(WorkedExample(600000000, /*once=*/true));
  ASSERT_TRUE(Alloc(a, 1, kMiB).ok());  // region 562273024 after backpedalling
  // 37726976 bytes are left on the device, but an Extend would first ask for
  // min(curr, 209020160 below the limit) and may not backpedal again: only
  // the free tail counts.
  const AllocResult r = Alloc(a, 2, 600000000);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(561224448));
  EXPECT_EQ(r.largest_free_block, Bytes(561224448));
}

TEST(BfcBackpedalTest, DoublingBeforeARefusedExtendPersists) {
  BfcOptions o = Limit(64 * kMiB);
  o.allow_growth = true;
  o.device_capacity = Bytes(16 * kMiB);
  BfcAllocator a(o);
  Alloc(a, 1, kMiB);  // region [0, 2 MiB); curr 4 MiB
  // 20 MiB: curr doubles 4 -> 32 MiB; 33554432, 30199040, 27179264, 24461568
  // and 22015488 are refused (14 MiB left on the device); 19814144 < 20 MiB.
  const AllocResult r = Alloc(a, 2, 20 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(DeviceFailures(a), 5);
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(32 * kMiB));
  // From 32 MiB the backpedal reaches 14444800 with room on the device.
  EXPECT_EQ(r.free_bytes, Bytes(kMiB + 14444800));
  EXPECT_EQ(r.largest_free_block, Bytes(14444800));
}

// limit 8 MiB, allow_growth, GC, device capacity 6 MiB.
//   A 1 MiB -> region 0 = [0, 2 MiB); B 3 MiB -> region 1 = [2 MiB, 6 MiB)
//   (4 MiB, 6 MiB on the device), handed out whole; curr 8 MiB.
TEST(BfcBackpedalTest, GcReleasesRegionsEvenWhenTheNextExtendFails) {
  BfcOptions o = Limit(8 * kMiB);
  o.allow_growth = true;
  o.garbage_collection = true;
  o.device_capacity = Bytes(6 * kMiB);
  BfcAllocator a(o);
  EventLog log;
  a.set_observer(&log);
  Alloc(a, 1, kMiB);
  ASSERT_EQ(Alloc(a, 2, 3 * kMiB).size, Bytes(4 * kMiB));
  a.Free(Handle(0));
  log.events.clear();
  // 3 MiB: Extend fails (2 MiB below the limit); GC releases region 0 (3 MiB
  // <= 8 - 6 + 2 MiB); Extend asks min(8 MiB, 4 MiB) with 4 MiB on the device:
  // 4194304, 3774976, 3397632 refused, 3057920 < 3 MiB: fail. The region is
  // gone anyway.
  const AllocResult r = Alloc(a, 3, 3 * kMiB);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(log.events,
            (std::vector<std::string>{"garbage_collection 2097152@0 #1", "region_released 2097152@0"}));
  EXPECT_EQ(Map(a), "[2097152+4194304] U2097152+4194304 h2>-");
  EXPECT_EQ(DeviceFailures(a), 3);
  // Backpedalling further, 2006784 is the first size with room on the device.
  EXPECT_EQ(r.free_bytes, Bytes(2006784));
  EXPECT_EQ(r.largest_free_block, Bytes(2006784));
  // Retrying changes nothing more: the state is a fixed point.
  const std::string before = Map(a);
  EXPECT_EQ(Alloc(a, 4, 3 * kMiB).status, AllocStatus::kOom);
  EXPECT_EQ(Map(a), before);
  EXPECT_EQ(log.events.size(), 2u);
  // And the largest request is served, at the next device address.
  const AllocResult fits = Alloc(a, 5, 2006784);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits.offset, Offset(6 * kMiB));
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(4 * kMiB + 2006784));
  EXPECT_INVARIANTS(a);
}

}  // namespace
}  // namespace hbmsim::testing
