// End to end through HBMSIM_BINARY: a cuda_async export shows the pool's
// mapped granules as segments (segment_map / segment_unmap per run, as
// PyTorch writes expandable segments), never its 2 GiB VA reservations, so
// the viewer's "reserved" figure is the mapped bytes at every entry.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/sim/viz/memory_viz_test_util.h"

namespace hbmsim::testing {
namespace {

// 2 MiB granules, nothing kept mapped after a free (release_threshold=0):
//   alloc 1 (3 MiB) maps [0, 4 MiB); alloc 2 (6 MiB at 3 MiB) maps [4, 10);
//   free 1 unmaps granule 0 (granule 1 still holds alloc 2's start);
//   alloc 3 (1 MiB at 0) maps [0, 2) again; free 2 unmaps [2, 10) in one run.
constexpr char kTrace[] =
    "# hbmsim-trace v1\n"
    "alloc 1 3145728\n"
    "alloc 2 6291456\n"
    "free 1\n"
    "alloc 3 1048576\n"
    "free 2\n";

TEST(MemoryVizCudaAsync, SegmentsAreTheMappedBytesAlongTheWalk) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  const std::string trace = TempPath("pool.trace");
  WriteFile(trace, kTrace);
  const std::string out = TempPath("pool.pickle");
  const std::string json = TempPath("pool.json");
  const CliRun run = RunHbmsim("replay " + trace + " --allocator cuda_async --set release_threshold=0 " +
                               "--bytes-limit 1GiB --memory-viz " + out + " --json " + json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Viewer entries (a free pair is one): 0 map 0+4M, 1 alloc, 2 map 4M+6M,
  // 3 alloc, 4 free, 5 unmap 0+2M, 6 map 0+2M, 7 alloc, 8 free, 9 unmap 2M+8M.
  EXPECT_EQ(RunPython("memory_viz_check.py", out + " --walk"),
            "device 0: 1 segments, 1 blocks, 12 entries (alloc=3 free_completed=2 free_requested=2 "
            "segment_map=3 segment_unmap=2), before 0/0, start 4194304/0, end 2097152/1048576\n"
            "  0 4194304/0\n"
            "  1 4194304/3145728\n"
            "  2 10485760/3145728\n"
            "  3 10485760/9437184\n"
            "  4 10485760/6291456\n"
            "  5 8388608/6291456\n"
            "  6 10485760/6291456\n"
            "  7 10485760/7340032\n"
            "  8 10485760/1048576\n"
            "  9 2097152/1048576\n");
  // The same bytes as the pool's own figures: mapped now and at the peak.
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["stats"]["pool_bytes"], 2097152);
  EXPECT_EQ(j["stats"]["peak_pool_bytes"], 10485760);
}

// cuda_async lets a queued block's own stream take it at once: alloc 2 lands
// on alloc 1, whose free was only requested. The export completes that free
// before the alloc (main refused the export: "alloc id 2 at 0x0 overlaps a
// live buffer"), and the recording's later free_completed 1 adds nothing.
TEST(MemoryVizCudaAsync, AQueuedBlockReusedByItsStreamIsFreedFirst) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  const std::string trace = TempPath("queued.trace");
  WriteFile(trace,
            "# hbmsim-trace v1\n"
            "alloc 1 2097152\n"
            "free_requested 1\n"
            "alloc 2 2097152\n"
            "free_completed 1\n"
            "free 2\n");
  const std::string out = TempPath("queued.json");
  const CliRun run = RunHbmsim("replay " + trace + " --allocator cuda_async --bytes-limit 1GiB --memory-viz " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(out));
  std::string actions;
  for (const auto& e : j["device_traces"][0])
    actions += e["action"].get<std::string>() + "@" + std::to_string(e["addr"].get<uint64_t>()) + " ";
  EXPECT_EQ(actions,
            "segment_map@0 alloc@0 free_requested@0 free_completed@0 alloc@0 free_requested@0 "
            "free_completed@0 ");
  EXPECT_EQ(RunPython("memory_viz_check.py", out + " --walk"),
            "device 0: 1 segments, 0 blocks, 7 entries (alloc=2 free_completed=2 free_requested=2 "
            "segment_map=1), before 0/0, start 2097152/0, end 2097152/0\n"
            "  0 2097152/0\n"
            "  1 2097152/2097152\n"
            "  2 2097152/0\n"
            "  3 2097152/2097152\n"
            "  4 2097152/0\n");
}

// The same in a start state: gen1_history_addresses records block 1 as
// active_pending_free, and cuda_async places the start state's alloc 7 on it.
TEST(MemoryVizCudaAsync, StartStateOverAPendingFreeExports) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  const std::string out = TempPath("gen1.pickle");
  const CliRun run = RunHbmsim("replay ../shared/torch_snapshots/gen1_history_addresses.pickle "
                               "--allocator cuda_async --bytes-limit 80GiB --memory-viz " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(MemoryVizCheck(out),
            "device 0: 1 segments, 541 blocks, 0 entries (), before 809500672/807625200, "
            "start 809500672/807625200, end 809500672/807625200\n");
}

// The generators and the fragmentation example replayed by cuda_async pass
// the backward walk, and the final reserved figure is the mapped bytes.
TEST(MemoryVizCudaAsync, GeneratorExportsPass) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  for (const std::string gen : {"training --layers 2 --hidden 256 --steps 2", "inference --requests 8",
                                "churn --events 3000"}) {
    const std::string trace = TempPath("gen.trace");
    ASSERT_EQ(RunHbmsim("gen " + gen + " --seed 7 -o " + trace).exit_code, 0) << gen;
    for (const std::string set : {"", " --set release_threshold=0"}) {
      const std::string out = TempPath("gen.json");
      const CliRun run = RunHbmsim("replay " + trace + " --allocator cuda_async --bytes-limit 4GiB" + set +
                                   " --memory-viz " + out);
      EXPECT_LE(run.exit_code, 1) << gen << set << ": " << run.err;
      const std::string check = MemoryVizCheck(out);
      EXPECT_EQ(check.find("FAIL"), std::string::npos) << gen << set << ": " << check;
      EXPECT_NE(check.find(", before 0/0,"), std::string::npos) << gen << set << ": " << check;
    }
  }
}

}  // namespace
}  // namespace hbmsim::testing
