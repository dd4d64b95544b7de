// Expandable segments: VA ranges, page mapping, growth across free + unmapped
// runs, unmapping whole free pages, releasing an empty range, capacity failures.
#include "allocator/torch/torch_allocator.h"
#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::kMiB;
using testing::Map;

TorchOptions Expandable(uint64_t capacity) {
  TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(capacity);
  return o;
}

// 1 GiB of device memory: ceil(1.125 GiB / 20 MiB) = 58 pages of address space.
constexpr uint64_t kLargeVa = 58 * 20 * kMiB;

TEST(TorchExpandable, MapsPagesOnDemandAndUnmapsWholeFreePages) {
  TorchAllocator a(Expandable(1024 * kMiB));
  testing::EventLog log;
  a.set_observer(&log);
  const AllocResult x = Alloc(a, 3 * kMiB);
  EXPECT_EQ(x.offset, Offset(0));
  EXPECT_EQ(
      Map(a),
      "region 0 1216348160\n  0 3145728 in_use\n  3145728 17825792 free\n  20971520 1195376640 unmapped\n");
  // 45 MiB: the free 17 MiB plus two more pages, merged into one block.
  const AllocResult y = Alloc(a, 45 * kMiB);
  EXPECT_EQ(y.offset, Offset(3 * kMiB));
  const AllocResult z = Alloc(a, 10 * kMiB);  // best fit: the 12 MiB tail, split at 512 B
  EXPECT_EQ(z.offset, Offset(48 * kMiB));
  EXPECT_EQ(z.size, Bytes(10 * kMiB));
  a.Free(y.handle);
  a.EmptyCache();  // only the page [20, 40) MiB lies wholly inside the free [3, 48) MiB
  EXPECT_EQ(Map(a),
            "region 0 1216348160\n  0 3145728 in_use\n  3145728 17825792 free\n  20971520 20971520 unmapped\n"
            "  41943040 8388608 free\n  50331648 10485760 in_use\n  60817408 2097152 free\n"
            "  62914560 1153433600 unmapped\n");
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 40 * kMiB);
  // 30 MiB: the free 17 MiB + the unmapped page + the free 8 MiB behind it.
  const AllocResult w = Alloc(a, 30 * kMiB);
  EXPECT_EQ(w.offset, Offset(3 * kMiB));
  EXPECT_EQ(log.lines, (std::vector<std::string>{
                           "region_extended 0 20971520 1", "region_extended 20971520 41943040 1",
                           "region_released 20971520 20971520 2", "region_extended 20971520 20971520 1"}));
  EXPECT_EQ(Counter(a, "num_device_alloc"), 3);
  EXPECT_EQ(Counter(a, "num_device_free"), 1);
  EXPECT_EQ(Counter(a, "segment.all.current"), 0);
  EXPECT_EQ(Counter(a, "inactive_split.all.current"), 0);
  EXPECT_EQ(Counter(a, "reserved_bytes.large_pool.current"), 60 * kMiB);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
  // Everything freed: one free run, unmapped whole, and the VA range given back.
  for (const AllocResult* r : {&x, &z, &w}) a.Free(r->handle);
  a.EmptyCache();
  EXPECT_EQ(Map(a), "");
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(log.lines.back(), "region_released 0 62914560 2");
}

TEST(TorchExpandable, SmallPoolUsesTwoMebibytePagesInItsOwnRange) {
  TorchAllocator a(Expandable(1024 * kMiB));
  Alloc(a, 3 * kMiB);
  const AllocResult s = Alloc(a, 1000);
  EXPECT_EQ(s.offset, Offset(kLargeVa));  // the next range from the device
  EXPECT_EQ(s.size, Bytes(1024));
  EXPECT_EQ(Counter(a, "reserved_bytes.small_pool.current"), 2 * kMiB);
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 22 * kMiB);
}

TEST(TorchExpandable, MappingBeyondCapacityFailsAsOom) {
  TorchAllocator a(Expandable(1024 * kMiB));
  ASSERT_TRUE(Alloc(a, 1000 * kMiB).ok());    // 50 pages
  const AllocResult r = Alloc(a, 30 * kMiB);  // two more pages: 1040 MiB > 1024 MiB
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.free_bytes, Bytes(24 * kMiB));
  EXPECT_EQ(r.largest_free_block, Bytes(20 * kMiB));
  EXPECT_EQ(a.last_oom()->alloc_size, Bytes(30 * kMiB));
  EXPECT_EQ(Counter(a, "num_alloc_retries"), 1);
  EXPECT_TRUE(Alloc(a, 20 * kMiB).ok());  // one page still fits
}

TEST(TorchExpandable, RecordedAddressStartsANewRangeClippedAtTheNextOne) {
  TorchAllocator a(Expandable(1024 * kMiB));
  const uint64_t base = 0x7f0000000000;
  EXPECT_EQ(Alloc(a, 3 * kMiB, /*stream=*/0, base + 100 * kMiB).offset, Offset(base + 100 * kMiB));
  // Another stream needs its own range; recorded just below the first one.
  EXPECT_EQ(Alloc(a, 50 * kMiB, /*stream=*/1, base).offset, Offset(base));
  EXPECT_EQ(Map(a).substr(0, 33), "region 139637976727552 104857600\n");
  // Growth of stream 1 beyond its 100 MiB range needs a new range; with no
  // recorded address it comes from the device.
  EXPECT_EQ(Alloc(a, 60 * kMiB, /*stream=*/1).offset, Offset(0));
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchExpandable, ARecordedRangeInsideAnUnmappedTailTrimsThatTail) {
  TorchAllocator a(Expandable(1024 * kMiB));
  const uint64_t base = 0x7f0000000000;
  Alloc(a, 3 * kMiB, /*stream=*/0, base);  // a full 1160 MiB range at base
  // Stream 1's range was recorded 100 MiB in: stream 0's range must end there.
  EXPECT_EQ(Alloc(a, 3 * kMiB, /*stream=*/1, base + 100 * kMiB).offset, Offset(base + 100 * kMiB));
  EXPECT_EQ(
      Map(a),
      "region 139637976727552 104857600\n  139637976727552 3145728 in_use\n  139637979873280 17825792 free\n"
      "  139637997699072 83886080 unmapped\n"
      "region 139638081585152 1216348160\n  139638081585152 3145728 in_use\n  139638084730880 17825792 free\n"
      "  139638102556672 1195376640 unmapped\n");
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

// No range is larger than 2^48 bytes: under a limit of 2^62 a range of
// 1.125 x 2^62 bytes each put the fourth past 2^64. Small pages (2 MiB)
// divide 2^48; large ones (20 MiB) take the most whole pages below it.
TEST(TorchExpandable, RangesStopAt2To48Bytes) {
  TorchAllocator a(Expandable(uint64_t{1} << 62));
  const uint64_t range = uint64_t{1} << 48;
  for (uint64_t stream = 0; stream < 4; ++stream) {
    EXPECT_EQ(Alloc(a, 4096, stream).offset, Offset(stream * range)) << stream;  // one small range per stream
  }
  const uint64_t large_range = range / (20 * kMiB) * (20 * kMiB);
  EXPECT_EQ(Alloc(a, 30 * kMiB, 0).offset, Offset(4 * range));
  EXPECT_EQ(Alloc(a, 30 * kMiB, 1).offset, Offset(4 * range + large_range));
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

}  // namespace
}  // namespace hbmsim::allocator::torch
