// The memory_viz trace is a ring buffer of the last N entries, and frees are
// recorded with the address and requested size of the alloc they end.
#include "sim/viz/memory_viz.h"

#include "gtest/gtest.h"
#include "tests/sim/engine/fake_allocator.h"
#include "tests/sim/engine/vector_reader.h"

namespace hbmsim::sim::viz {
namespace {

using hbmsim::testing::FakeAllocator;
using hbmsim::testing::VectorReader;
using Json = nlohmann::ordered_json;

Json Replay(std::vector<std::string> lines, size_t max_entries) {
  FakeAllocator allocator(Bytes::KiB(4));
  ReplayOptions options;
  MemoryVizRecorder mv(allocator, options, max_entries);
  ReplayEngine engine(allocator, options);
  engine.AddObserver(&mv);
  VectorReader reader(std::move(lines));
  EXPECT_TRUE(engine.Run(mv.Tap(reader)).ok());
  return mv.Snapshot(Json::object());
}

TEST(MemoryViz, FreesCarryTheAllocsAddressAndRequestedSize) {
  const Json s = Replay({"alloc 1 100", "alloc 2 300", "free 1", "alloc 3 9000", "free_requested 2"}, 100);
  const Json& t = s["device_traces"][0];
  // FakeAllocator announces its region at the first alloc (segment_alloc).
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0]["action"], "segment_alloc");
  EXPECT_EQ(t[2]["action"], "alloc");
  EXPECT_EQ(t[2]["addr"], 256);  // after block 1 (100 rounded to 256)
  EXPECT_EQ(t[2]["size"], 300);
  EXPECT_EQ(t[3]["action"], "free_requested");
  EXPECT_EQ(t[4]["action"], "free_completed");
  EXPECT_EQ(t[4]["addr"], 0);
  EXPECT_EQ(t[4]["size"], 100);
  EXPECT_EQ(t[5]["action"], "oom");
  // PyTorch's device_free is what the device has left outside the pool (limit - reserved): the
  // fake allocator reserved the whole 4096-byte limit at its first alloc.
  EXPECT_EQ(t[5]["device_free"], 0);
  EXPECT_EQ(t[5]["size"], 9216);
  EXPECT_EQ(t[6]["action"], "free_requested");
  const Json& blocks = s["segments"][0]["blocks"];
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[1]["state"], "active_allocated");
  EXPECT_EQ(blocks[1]["requested_size"], 300);
  EXPECT_EQ(s["allocator_settings"]["trace_alloc_overflowed"], false);
}

TEST(MemoryViz, OnlyTheLastEntriesAreKept) {
  const Json s = Replay({"alloc 1 100", "free 1", "alloc 2 100", "free 2", "alloc 3 200"}, 3);
  const Json& t = s["device_traces"][0];
  ASSERT_EQ(t.size(), 3u);
  // FakeAllocator announces a region whenever a block lands at offset 0.
  EXPECT_EQ(t[0]["action"], "free_completed");
  EXPECT_EQ(t[1]["action"], "segment_alloc");
  EXPECT_EQ(t[2]["action"], "alloc");
  EXPECT_EQ(t[2]["size"], 200);
  EXPECT_EQ(s["allocator_settings"]["trace_alloc_max_entries"], 3);
  EXPECT_EQ(s["allocator_settings"]["trace_alloc_overflowed"], true);
}

}  // namespace
}  // namespace hbmsim::sim::viz
