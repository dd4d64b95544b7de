// AllocRequest::recorded_address (--check-recorded): the address a recording
// saw may choose where NEW memory starts, never a placement inside memory the
// allocator already holds. A faithful replay then reproduces real addresses.
#include <map>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"
#include "tests/common/random_ops.h"

namespace hbmsim::testing {
namespace {

constexpr uint64_t kR = 0x7f0000000000;  // 139637976727552, a typical CUDA address

AllocResult AllocAt(BfcAllocator& a, uint64_t id, uint64_t bytes, std::optional<uint64_t> recorded) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  if (recorded) req.recorded_address = Offset(*recorded);
  return a.Allocate(req);
}

BfcOptions GrowthLimit(uint64_t limit, bool coalescing = false) {
  BfcOptions o = Limit(limit);
  o.allow_growth = true;
  o.region_coalescing = coalescing;
  return o;
}

TEST(BfcRecordedTest, NewRegionStartsAtTheRecordedAddressHeldMemoryIgnoresIt) {
  BfcAllocator a(Limit(kMiB));
  EXPECT_EQ(AllocAt(a, 1, 1000, kR).offset, Offset(kR));
  // Fits the region already held: placed by best fit, the recording ignored.
  EXPECT_EQ(AllocAt(a, 2, 300, 0x1234500).offset, Offset(kR + 1024));
  EXPECT_EQ(Map(a),
            "[139637976727552+1048576] U139637976727552+1024 h0>1, U139637976728576+512 h1>2, "
            "F139637976729088+1047040 h2>-");
  EXPECT_INVARIANTS(a);
}

TEST(BfcRecordedTest, RegionsStayInAddressOrder) {
  BfcAllocator a(GrowthLimit(64 * kMiB));
  AllocAt(a, 1, kMiB, kR);                                       // region [kR, kR + 2 MiB)
  const AllocResult r = AllocAt(a, 2, 4 * kMiB, kR - 8 * kMiB);  // 4 MiB region, lower
  EXPECT_EQ(r.offset, Offset(kR - 8 * kMiB));
  const std::vector<BlockInfo> blocks = Blocks(a);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].offset, Offset(kR - 8 * kMiB));  // the walk starts with the lower region
  EXPECT_EQ(blocks[1].offset, Offset(kR));
  EXPECT_INVARIANTS(a);
}

TEST(BfcRecordedTest, OverlappingOrUnalignedRecordedAddressFallsBackToTheDevice) {
  BfcAllocator a(GrowthLimit(64 * kMiB));
  AllocAt(a, 1, kMiB, kMiB);  // region [1 MiB, 3 MiB); the device is untouched
  // Recorded inside that region: diverged. The device's range [0, 4 MiB)
  // would overlap it too, so the next range, [4 MiB, 8 MiB), is used; 4 MiB <
  // 2 * 3 MiB and 1 MiB < 128 MiB: handed out whole.
  AllocResult r = AllocAt(a, 2, 3 * kMiB, 2 * kMiB);
  EXPECT_EQ(r.offset, Offset(4 * kMiB));
  EXPECT_EQ(Map(a),
            "[1048576+2097152] U1048576+1048576 h0>1, F2097152+1048576 h1>- | "
            "[4194304+4194304] U4194304+4194304 h2>-");
  // Not a multiple of 256: not a BFC address; the device continues at 8 MiB.
  r = AllocAt(a, 3, 8 * kMiB, kR + 16);
  EXPECT_EQ(r.offset, Offset(8 * kMiB));
  EXPECT_INVARIANTS(a);
}

TEST(BfcRecordedTest, RecordedFreeTailMeansTheRegionWasExtended) {
  BfcAllocator a(GrowthLimit(8 * kMiB, /*coalescing=*/true));
  EventLog log;
  a.set_observer(&log);
  AllocAt(a, 1, kMiB, kR);  // [kR, kR + 2 MiB): A, free tail at kR + 1 MiB
  // The recording put 1.5 MiB at the free tail: the new 4 MiB went right
  // after the region and merged with the tail.
  const AllocResult r = AllocAt(a, 2, kMiB + kMiB / 2, kR + kMiB);
  EXPECT_EQ(r.offset, Offset(kR + kMiB));
  EXPECT_EQ(Map(a),
            "[139637976727552+6291456] U139637976727552+1048576 h0>1, U139637977776128+1572864 h1>2, "
            "F139637979348992+3670016 h2>-");
  EXPECT_EQ(log.events, (std::vector<std::string>{"region_added 2097152@139637976727552",
                                                  "region_extended 4194304@139637978824704"}));
  EXPECT_INVARIANTS(a);
}

TEST(BfcRecordedTest, DeviceSkipsRegionsPlacedAtLowRecordedAddresses) {
  BfcAllocator a(GrowthLimit(64 * kMiB));
  AllocAt(a, 1, kMiB, 0);  // region [0, 2 MiB) without the device
  // No recording: the device's first range [0, 4 MiB) overlaps; next is [4, 8).
  EXPECT_EQ(AllocAt(a, 2, 3 * kMiB, std::nullopt).offset, Offset(4 * kMiB));
  EXPECT_INVARIANTS(a);
}

// Replaying a run with its own addresses as the recording (shifted by 1 TiB)
// reproduces every placement at the shifted address, across the options.
TEST(BfcRecordedTest, ReplayWithRecordedAddressesReproducesTheRecordedRun) {
  constexpr uint64_t kShift = uint64_t{1} << 40;
  ProgramShape shape;
  shape.num_ops = 1500;
  for (int bits = 0; bits < 16; ++bits) {
    BfcOptions o = Limit(256 * kMiB + 100);
    o.allow_growth = (bits & 1) != 0;
    o.garbage_collection = (bits & 2) != 0;
    o.region_coalescing = (bits & 4) != 0;
    if ((bits & 8) != 0) o.device_capacity = Bytes(160 * kMiB);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const std::vector<Op> ops = GenerateProgram(seed, shape);
      BfcAllocator recorded(o);
      BfcAllocator replayed(o);
      std::map<uint64_t, std::pair<Handle, Handle>> live;
      for (const Op& op : ops) {
        const std::string where = fmt::format("options {} seed {} {}", bits, seed, OpToString(op));
        if (op.kind != OpKind::kAlloc) {
          auto it = live.find(op.id);
          if (it == live.end()) continue;
          recorded.Free(it->second.first);
          replayed.Free(it->second.second);
          live.erase(it);
          continue;
        }
        const AllocResult r1 = AllocAt(recorded, op.id, op.bytes, std::nullopt);
        const AllocResult r2 =
            AllocAt(replayed, op.id, op.bytes,
                    r1.has_offset ? std::optional(r1.offset.value() + kShift) : std::nullopt);
        ASSERT_EQ(r1.status, r2.status) << where;
        ASSERT_EQ(r1.size, r2.size) << where;
        if (r1.has_offset) {
          ASSERT_EQ(r2.offset.value(), r1.offset.value() + kShift) << where;
        }
        if (r1.ok()) live[op.id] = {r1.handle, r2.handle};
      }
      ASSERT_TRUE(replayed.CheckInvariants().ok()) << replayed.CheckInvariants().message();
    }
  }
}

}  // namespace
}  // namespace hbmsim::testing
