// The address map aggregates blocks narrower than a pixel, so its size is
// bounded by the drawing, and it reports rounding waste exactly.
#include "sim/viz/address_map.h"

#include "gtest/gtest.h"
#include "sim/viz/html_report.h"
#include "tests/sim/engine/fake_allocator.h"

namespace hbmsim::sim::viz {
namespace {

using hbmsim::testing::FakeAllocator;

void AllocateN(FakeAllocator& a, int n, uint64_t bytes) {
  for (int i = 0; i < n; ++i) {
    AllocRequest r;
    r.id = BufferId(i);
    r.bytes = Bytes(bytes);
    ASSERT_TRUE(a.Allocate(r).ok());
  }
}

TEST(AddressMap, WideBlocksAreCellsWithTheirWaste) {
  FakeAllocator a(Bytes::MiB(1));
  AllocateN(a, 3, 1000);  // rounded to 1024: 24 bytes of waste each
  const AddressMap m = TakeAddressMap(a, 7, "t");
  EXPECT_EQ(m.event, 7u);
  EXPECT_EQ(m.regions, 1u);
  EXPECT_EQ(m.blocks, 4u);
  EXPECT_EQ(m.total_bytes, 1048576u);
  EXPECT_EQ(m.waste_bytes, 72u);
  EXPECT_EQ(m.free_bytes, 1048576u - 3072u);
  EXPECT_EQ(m.largest_free, 1048576u - 3072u);
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(m.cells[1].begin, 12u);  // 1024 × 13200 / 2^20 = 12.9
  EXPECT_EQ(m.cells[1].end, 25u);
  EXPECT_EQ(m.cells[1].waste, 24u);
  EXPECT_EQ(m.cells[3].state, BlockState::kFree);
  EXPECT_EQ(m.cells[3].end, AddressMap::kUnits);
}

TEST(AddressMap, NarrowBlocksAreAggregatedPerPixel) {
  FakeAllocator a(Bytes::GiB(1));
  AllocateN(a, 2000, 256);  // one unit is 2^30 / 13200 = 81344.5 bytes = 317.75 blocks
  const AddressMap m = TakeAddressMap(a, 0, "t");
  EXPECT_EQ(m.blocks, 2001u);
  // At each of the 6 unit boundaries the aggregate closes and the block that
  // straddles the boundary is a 1-unit cell: 6 × 2 + the last aggregate + free.
  ASSERT_EQ(m.cells.size(), 14u);
  EXPECT_EQ(m.cells[0].blocks, 317u);
  EXPECT_EQ(m.cells[1].blocks, 1u);
  EXPECT_EQ(m.cells[1].end - m.cells[1].begin, 1u);
  EXPECT_EQ(m.cells[0].state, BlockState::kInUse);
  uint64_t aggregated = 0;
  for (int i = 0; i < 13; ++i) aggregated += m.cells[i].blocks;
  EXPECT_EQ(aggregated, 2000u);
  const std::string svg = AddressMapSvg(m);
  EXPECT_NE(svg.find("data-blocks=\"2001\" data-cells=\"14\""), std::string::npos);
  EXPECT_NE(svg.find("317 blocks from 0x0"), std::string::npos);
}

}  // namespace
}  // namespace hbmsim::sim::viz
