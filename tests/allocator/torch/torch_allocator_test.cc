// Placement rules of the torch policy: pools, segment sizes, split rules, best
// fit, streams, pending frees, merging, oversize rules, recorded addresses.
#include "allocator/torch/torch_allocator.h"

#include "gtest/gtest.h"
#include "tests/allocator/torch/torch_test_util.h"

namespace hbmsim::allocator::torch {
namespace {

using testing::Alloc;
using testing::Counter;
using testing::kMiB;
using testing::Map;

TEST(TorchPlacement, SmallRequestsShareATwoMebibyteSegment) {
  TorchAllocator a({});
  const AllocResult r1 = Alloc(a, 1000);
  const AllocResult r2 = Alloc(a, 1000);
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(r1.offset, Offset(0));
  EXPECT_EQ(r1.size, Bytes(1024));
  EXPECT_EQ(r1.rounded, Bytes(1024));
  EXPECT_EQ(r2.offset, Offset(1024));
  EXPECT_EQ(Map(a), "region 0 2097152\n  0 1024 in_use\n  1024 1024 in_use\n  2048 2095104 free\n");
  EXPECT_EQ(Counter(a, "segment.small_pool.current"), 1);
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 2097152);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.small_pool.current"), 2095104);
  EXPECT_EQ(Counter(a, "requested_bytes.all.current"), 2000);
  EXPECT_EQ(Counter(a, "allocated_bytes.all.current"), 2048);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchPlacement, LargeSegmentsAndTheOneMebibyteSplitThreshold) {
  TorchAllocator a({});
  EXPECT_EQ(Alloc(a, 3 * kMiB).offset, Offset(0));  // 20 MiB segment, 17 MiB remainder
  // 19.5 MiB needs its own 20 MiB segment; 0.5 MiB would remain: not split.
  const AllocResult big = Alloc(a, 20447232);
  EXPECT_EQ(big.offset, Offset(20 * kMiB));
  EXPECT_EQ(big.size, Bytes(20 * kMiB));
  EXPECT_EQ(big.rounded, Bytes(20447232));
  // 16 MiB from the 17 MiB block leaves exactly 1 MiB: not split either.
  const AllocResult exact = Alloc(a, 16 * kMiB);
  EXPECT_EQ(exact.offset, Offset(3 * kMiB));
  EXPECT_EQ(exact.size, Bytes(17 * kMiB));
  EXPECT_EQ(Map(a),
            "region 0 20971520\n  0 3145728 in_use\n  3145728 17825792 in_use\n"
            "region 20971520 20971520\n  20971520 20971520 in_use\n");

  TorchAllocator b({});
  Alloc(b, 3 * kMiB);
  // 16 MiB − 512 leaves 1 MiB + 512 > 1 MiB: split.
  const AllocResult split = Alloc(b, 16 * kMiB - 512);
  EXPECT_EQ(split.size, Bytes(16 * kMiB - 512));
  EXPECT_EQ(Map(b),
            "region 0 20971520\n  0 3145728 in_use\n  3145728 16776704 in_use\n  19922432 1049088 free\n");
}

TEST(TorchPlacement, SmallPoolSplitsDownTo512Bytes) {
  TorchAllocator a({});
  EXPECT_EQ(Alloc(a, kMiB).size, Bytes(kMiB));  // rounded 1 MiB is still small
  EXPECT_EQ(Alloc(a, kMiB - 512).offset, Offset(kMiB));
  const AllocResult last = Alloc(a, 1);
  EXPECT_EQ(last.offset, Offset(2 * kMiB - 512));
  EXPECT_EQ(last.size, Bytes(512));
  EXPECT_EQ(Counter(a, "segment.all.current"), 1);
  EXPECT_EQ(Counter(a, "inactive_split.all.current"), 0);
}

TEST(TorchPlacement, TenMebibytesAndUpGetTheRequestRoundedToTwoMebibytes) {
  TorchAllocator a({});
  testing::EventLog log;
  a.set_observer(&log);
  const AllocResult r = Alloc(a, 10 * kMiB + 1);
  EXPECT_EQ(r.rounded, Bytes(10 * kMiB + 512));
  EXPECT_EQ(r.size, Bytes(10 * kMiB + 512));  // 2 MiB − 512 remains: split
  EXPECT_EQ(log.lines, std::vector<std::string>{"region_added 0 12582912 0"});
}

TEST(TorchPlacement, BestFitThenLowestAddress) {
  TorchAllocator a({});
  std::vector<AllocResult> r;
  for (uint64_t bytes : {1024, 4096, 1024, 4096, 1024, 1024, 1024}) r.push_back(Alloc(a, bytes));
  // 0:a(1K) 1024:b(4K) 5120:c(1K) 6144:d(4K) 10240:g(1K) 11264:e(1K) 12288:f(1K)
  a.Free(r[1].handle);
  a.Free(r[3].handle);
  a.Free(r[5].handle);
  EXPECT_EQ(Alloc(a, 1000).offset, Offset(11264));  // the exact 1 KiB hole, not the lower 4 KiB one
  EXPECT_EQ(Alloc(a, 4096).offset, Offset(1024));   // two 4 KiB holes: the lower one
  EXPECT_EQ(Alloc(a, 4096).offset, Offset(6144));
  EXPECT_TRUE(a.CheckInvariants().ok());
}

TEST(TorchPlacement, FreeBlocksServeOnlyTheirOwnStream) {
  TorchAllocator a({});
  a.Free(Alloc(a, 1024, /*stream=*/0).handle);
  EXPECT_EQ(Alloc(a, 1024, /*stream=*/1).offset, Offset(2 * kMiB));
  EXPECT_EQ(Alloc(a, 1024, /*stream=*/0).offset, Offset(0));
  EXPECT_EQ(Counter(a, "segment.all.current"), 2);
}

TEST(TorchPlacement, PendingFreesStayActiveUntilCompleted) {
  TorchAllocator a({});
  const AllocResult r = Alloc(a, 3 * kMiB);
  a.RequestFree(r.handle);
  EXPECT_EQ(Counter(a, "allocated_bytes.all.current"), 0);
  EXPECT_EQ(Counter(a, "allocation.all.current"), 0);
  EXPECT_EQ(Counter(a, "active_bytes.all.current"), 3 * kMiB);
  EXPECT_EQ(Counter(a, "requested_bytes.all.current"), 3 * kMiB);
  EXPECT_EQ(a.GetStats().bytes_in_use, 3 * kMiB);
  EXPECT_EQ(Map(a), "region 0 20971520\n  0 3145728 pending_free\n  3145728 17825792 free\n");
  const AllocResult second = Alloc(a, 3 * kMiB);
  EXPECT_EQ(second.offset, Offset(3 * kMiB));
  a.CompleteFree(r.handle);
  EXPECT_EQ(Counter(a, "active_bytes.all.current"), 3 * kMiB);
  EXPECT_EQ(Alloc(a, 3 * kMiB).offset, Offset(0));
  a.CompleteFree(r.handle);  // already completed: a no-op
  EXPECT_EQ(Counter(a, "active.all.current"), 2);
  EXPECT_TRUE(a.CheckInvariants().ok()) << a.CheckInvariants();
}

TEST(TorchPlacement, FreeMergesNeighboursAndTracksNonReleasableBytes) {
  TorchAllocator a({});
  const AllocResult x = Alloc(a, 3 * kMiB);
  const AllocResult y = Alloc(a, 3 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split.large_pool.current"), 1);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.large_pool.current"), 14 * kMiB);
  a.Free(x.handle);
  EXPECT_EQ(Counter(a, "inactive_split.large_pool.current"), 2);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.large_pool.current"), 17 * kMiB);
  a.Free(y.handle);
  EXPECT_EQ(Counter(a, "inactive_split.large_pool.current"), 0);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.large_pool.current"), 0);
  // +17 MiB (first split), −3 MiB (second alloc shrinks it), +3 MiB (free x).
  EXPECT_EQ(Counter(a, "inactive_split_bytes.large_pool.allocated"), 20 * kMiB);
  EXPECT_EQ(Counter(a, "inactive_split_bytes.large_pool.freed"), 20 * kMiB);
  EXPECT_EQ(Map(a), "region 0 20971520\n  0 20971520 free\n");
  EXPECT_EQ(Counter(a, "reserved_bytes.all.current"), 20 * kMiB);  // freeing never returns a segment
}

TEST(TorchPlacement, OversizeBlocksServeOnlyOversizeRequestsWithinTheRounding) {
  TorchOptions o;
  o.max_split_size = Bytes(32 * kMiB);
  TorchAllocator a(o);
  const AllocResult big = Alloc(a, 40 * kMiB);
  EXPECT_EQ(Counter(a, "oversize_segments.all.current"), -999);  // oversize stats have no pools
  EXPECT_EQ(Counter(a, "oversize_segments.current"), 1);
  EXPECT_EQ(Counter(a, "oversize_allocations.current"), 1);
  EXPECT_EQ(Counter(a, "max_split_size"), 32 * kMiB);
  a.Free(big.handle);
  EXPECT_EQ(Counter(a, "oversize_allocations.current"), 0);
  // A small request may not take the 40 MiB oversize block.
  EXPECT_EQ(Alloc(a, 8 * kMiB).offset, Offset(40 * kMiB));
  // An oversize request takes it unsplit (40 < 35 + 20).
  const AllocResult c = Alloc(a, 35 * kMiB);
  EXPECT_EQ(c.offset, Offset(0));
  EXPECT_EQ(c.size, Bytes(40 * kMiB));

  TorchAllocator b(o);
  b.Free(Alloc(b, 60 * kMiB).handle);
  EXPECT_EQ(Alloc(b, 36 * kMiB).offset, Offset(60 * kMiB));  // 60 >= 36 + 20: too wasteful
  EXPECT_EQ(Alloc(b, 41 * kMiB).offset, Offset(0));          // 60 < 41 + 20
  o.max_non_split_rounding = Bytes(30 * kMiB);
  TorchAllocator c30(o);
  c30.Free(Alloc(c30, 60 * kMiB).handle);
  EXPECT_EQ(Alloc(c30, 36 * kMiB).offset, Offset(0));  // 60 < 36 + 30
}

TEST(TorchPlacement, RecordedAddressesChooseOnlyNewSegmentBases) {
  TorchAllocator a({});
  testing::EventLog log;
  a.set_observer(&log);
  const uint64_t base = 0x7f0000000000;
  EXPECT_EQ(Alloc(a, 3 * kMiB, 0, base).offset, Offset(base));
  // Served from the cache: the recorded address cannot move it.
  EXPECT_EQ(Alloc(a, 3 * kMiB, 0, 0x1234).offset, Offset(base + 3 * kMiB));
  // A recorded range overlapping held memory falls back to the device.
  EXPECT_EQ(Alloc(a, 20 * kMiB, 0, base + kMiB).offset, Offset(0));
  EXPECT_EQ(log.lines, (std::vector<std::string>{"region_added 139637976727552 20971520 0",
                                                 "region_added 0 20971520 0"}));
}

TEST(TorchPlacement, ZeroBytesReserveNothing) {
  TorchAllocator a({});
  const AllocResult r = Alloc(a, 0);
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.has_offset);
  EXPECT_EQ(r.handle, kNullHandle);
  a.Free(r.handle);
  EXPECT_EQ(Map(a), "");
  EXPECT_EQ(a.GetStats().num_allocs, 0);
}

TEST(TorchStatsView, AllocatorStatsAndSortedCounters) {
  TorchOptions o;
  o.capacity = Bytes(100 * kMiB);
  TorchAllocator a(o);
  const AllocResult r = Alloc(a, 3 * kMiB);
  Alloc(a, 1000);
  a.Free(r.handle);
  const AllocatorStats s = a.GetStats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.peak_bytes_in_use, 3 * kMiB + 1024);
  EXPECT_EQ(s.largest_alloc_size, 3 * kMiB);
  EXPECT_EQ(s.bytes_limit, 100 * kMiB);
  EXPECT_EQ(s.pool_bytes, 22 * kMiB);
  EXPECT_EQ(s.peak_pool_bytes, 22 * kMiB);
  // 78 MiB of headroom + the releasable 20 MiB segment: a 98 MiB segment fits.
  EXPECT_EQ(s.largest_free_block_bytes, 98 * kMiB);
  Counters c;
  a.AppendCounters(c);
  ASSERT_EQ(c.size(), 122u);
  EXPECT_EQ(c.front().name, "active.all.allocated");
  EXPECT_EQ(c[4].name, "active.large_pool.allocated");
  EXPECT_EQ(c.back().name, "segment.small_pool.peak");
  for (size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1].name, c[i].name);
  EXPECT_EQ(Counter(a, "max_split_size"), kUnlimitedStat);  // memory_stats() says -1
  EXPECT_EQ(Counter(a, "num_device_alloc"), 2);
}

}  // namespace
}  // namespace hbmsim::allocator::torch
