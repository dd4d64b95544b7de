// Placement rules inside one region (REF §1.1-§1.5): rounding, the split
// thresholds, best fit and its tie on address, coalescing, handle recycling.
// Every region here is a whole 1 MiB limit (allow_growth = false), so the
// first Extend makes one region [0, 1048576) and the pool never grows.
#include <limits>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(BfcPlacementTest, RoundsTo256AndSplitsTheLowEnd) {
  BfcAllocator a(Limit(kMiB));
  // 1 byte -> 256. The 1 MiB region chunk h0 is split: h0 keeps [0,256), the
  // remainder gets the fresh handle 1.
  AllocResult r = Alloc(a, 1, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.handle, Handle(0));
  EXPECT_TRUE(r.has_offset);
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(r.size, Bytes(256));
  EXPECT_EQ(r.rounded, Bytes(256));
  // 257 -> 512, cut from h1 at 256; the remainder 1048576-768 = 1047808 is h2.
  r = Alloc(a, 2, 257);
  EXPECT_EQ(r.handle, Handle(1));
  EXPECT_EQ(r.offset, Offset(256));
  EXPECT_EQ(r.size, Bytes(512));
  EXPECT_EQ(r.rounded, Bytes(512));
  EXPECT_EQ(Map(a), "[0+1048576] U0+256 h0>1, U256+512 h1>2, F768+1047808 h2>-");
  EXPECT_INVARIANTS(a);
}

// Builds [A 1024 @0][B 256 @1024][free tail] and frees A: a 1024-byte hole.
void MakeHoleOf1024(BfcAllocator& a) {
  ASSERT_EQ(Alloc(a, 1, 1024).offset, Offset(0));
  ASSERT_EQ(Alloc(a, 2, 256).offset, Offset(1024));
  a.Free(Handle(0));
}

TEST(BfcPlacementTest, SplitsAtExactlyTwiceTheRequest) {
  BfcAllocator a(Limit(kMiB));
  MakeHoleOf1024(a);
  // 1024 >= 2*512: split; the 512-byte remainder takes the fresh handle 3.
  const AllocResult r = Alloc(a, 3, 512);
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(r.size, Bytes(512));
  EXPECT_EQ(Map(a), "[0+1048576] U0+512 h0>3, F512+512 h3>1, U1024+256 h1>2, F1280+1047296 h2>-");
  EXPECT_INVARIANTS(a);
}

TEST(BfcPlacementTest, HandsOutTheWholeChunkBelowTwiceTheRequest) {
  BfcAllocator a(Limit(kMiB));
  MakeHoleOf1024(a);
  // 513 -> 768; 1024 < 1536 and the 256-byte remainder < 128 MiB: no split,
  // and bytes_in_use counts the whole chunk (internal fragmentation).
  const AllocResult r = Alloc(a, 3, 513);
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(r.size, Bytes(1024));
  EXPECT_EQ(r.rounded, Bytes(768));
  EXPECT_EQ(a.GetStats().bytes_in_use, 1024 + 256);
  EXPECT_EQ(a.GetStats().largest_alloc_size, 1024);
  EXPECT_EQ(Map(a), "[0+1048576] U0+1024 h0>1, U1024+256 h1>2, F1280+1047296 h2>-");
  EXPECT_INVARIANTS(a);
}

// One 400 MiB chunk; requests just under half of it test the remainder rule.
TEST(BfcPlacementTest, SplitsWhenTheRemainderIsAtLeast128MiB) {
  BfcAllocator a(Limit(400 * kMiB));
  // 272 MiB: 2x fails (544 MiB > 400 MiB), remainder exactly 128 MiB: split.
  const AllocResult r = Alloc(a, 1, 272 * kMiB);
  EXPECT_EQ(r.size, Bytes(272 * kMiB));
  EXPECT_EQ(Map(a), "[0+419430400] U0+285212672 h0>1, F285212672+134217728 h1>-");
}

TEST(BfcPlacementTest, KeepsTheChunkWhenTheRemainderIsJustBelow128MiB) {
  BfcAllocator a(Limit(400 * kMiB));
  // 272 MiB + 256: remainder 128 MiB - 256: the whole 400 MiB is handed out.
  const AllocResult r = Alloc(a, 1, 272 * kMiB + 256);
  EXPECT_EQ(r.size, Bytes(400 * kMiB));
  EXPECT_EQ(r.rounded, Bytes(272 * kMiB + 256));
  EXPECT_EQ(Map(a), "[0+419430400] U0+419430400 h0>-");
}

TEST(BfcPlacementTest, FragmentationFractionReplacesThe128MiBThreshold) {
  BfcOptions o = Limit(400 * kMiB);
  o.fragmentation_fraction = 0.25;  // 0.25 * 400 MiB = 100 MiB
  {
    BfcAllocator a(o);
    EXPECT_EQ(a.max_internal_fragmentation_bytes(), Bytes(100 * kMiB));
    // Remainder exactly 100 MiB (< 128 MiB, so the default would not split).
    EXPECT_EQ(Alloc(a, 1, 300 * kMiB).size, Bytes(300 * kMiB));
  }
  {
    BfcAllocator a(o);
    // Remainder 100 MiB - 256: no split.
    EXPECT_EQ(Alloc(a, 1, 300 * kMiB + 256).size, Bytes(400 * kMiB));
  }
}

TEST(BfcPlacementTest, FragmentationThresholdIsTruncatedToAnInteger) {
  BfcOptions o = Limit(1000);
  o.fragmentation_fraction = 1.0 / 3.0;  // 333.33... -> 333
  EXPECT_EQ(BfcAllocator(o).max_internal_fragmentation_bytes(), Bytes(333));
  EXPECT_EQ(BfcAllocator(Limit(1000)).max_internal_fragmentation_bytes(), Bytes(128 * kMiB));
}

// [A 1024 @0][B 256][C 1024 @1280][D 256 @2304][tail]
void MakeTwoHolesOf1024(BfcAllocator& a, bool free_high_first) {
  ASSERT_EQ(Alloc(a, 1, 1024).handle, Handle(0));
  ASSERT_EQ(Alloc(a, 2, 256).handle, Handle(1));
  ASSERT_EQ(Alloc(a, 3, 1024).handle, Handle(2));
  ASSERT_EQ(Alloc(a, 4, 256).handle, Handle(3));
  a.Free(Handle(free_high_first ? 2 : 0));
  a.Free(Handle(free_high_first ? 0 : 2));
}

TEST(BfcPlacementTest, BestFitTieGoesToTheLowerAddress) {
  for (bool free_high_first : {false, true}) {
    BfcAllocator a(Limit(kMiB));
    MakeTwoHolesOf1024(a, free_high_first);
    EXPECT_EQ(Alloc(a, 5, 1000).offset, Offset(0));
    EXPECT_EQ(Alloc(a, 6, 1000).offset, Offset(1280));
    // Both holes used: the next one comes from the tail at 2560.
    EXPECT_EQ(Alloc(a, 7, 1000).offset, Offset(2560));
    EXPECT_INVARIANTS(a);
  }
}

TEST(BfcPlacementTest, BestFitPrefersTheSmallerChunkOverTheLowerAddress) {
  BfcAllocator a(Limit(kMiB));
  // [A 2048 @0][B 256 @2048][C 1024 @2304][D 256 @3328][tail]
  Alloc(a, 1, 2048);
  Alloc(a, 2, 256);
  Alloc(a, 3, 1024);
  Alloc(a, 4, 256);
  a.Free(Handle(0));
  a.Free(Handle(2));
  // Holes: 2048 @0 and 1024 @2304; 1024 fits both, the smaller one wins.
  EXPECT_EQ(Alloc(a, 5, 1024).offset, Offset(2304));
  // 1025 -> 1280 fits only the 2048 hole; 2048 < 2560, so no split.
  const AllocResult r = Alloc(a, 6, 1025);
  EXPECT_EQ(r.offset, Offset(0));
  EXPECT_EQ(r.size, Bytes(2048));
}

}  // namespace
}  // namespace hbmsim::testing
