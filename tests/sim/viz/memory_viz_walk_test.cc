// End to end through HBMSIM_BINARY.
// The backward-walk checker (tests/sim/viz/memory_viz_check.py, the rules of
// docs/memory-viz-rules.md): it fails on exports the viewer cannot draw, it
// passes on PyTorch's own snapshots, and every export of every policy and
// generator passes it.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/sim/viz/memory_viz_test_util.h"

namespace hbmsim::testing {
namespace {

std::string CheckJson(const std::string& name, const std::string& json) {
  const std::string path = TempPath(name);
  WriteFile(path, json);
  return MemoryVizCheck(path);
}

// A final segment at 0x1000 of 4096 bytes with one live block of 512.
const std::string kSegment = R"({"device":0,"address":4096,"total_size":4096,"stream":0,"blocks":[)"
                             R"({"size":512,"requested_size":500,"state":"active_allocated","frames":[]},)"
                             R"({"size":3584,"requested_size":0,"state":"inactive","frames":[]}]})";

TEST(MemoryVizWalk, AConsistentFilePasses) {
  const std::string json = R"({"segments":[)" + kSegment +
                           R"(],"device_traces":[[)"
                           R"({"action":"segment_alloc","addr":4096,"size":4096,"stream":0},)"
                           R"({"action":"alloc","addr":4096,"size":500,"stream":0}]]})";
  EXPECT_EQ(
      CheckJson("ok.json", json),
      "device 0: 1 segments, 1 blocks, 2 entries (alloc=1 segment_alloc=1), before 0/0, start 4096/0, end 4096/500\n");
}

TEST(MemoryVizWalk, FailsOnOverlappingSegments) {
  const std::string json = R"({"segments":[)" + kSegment +
                           R"(,{"device":0,"address":6144,"total_size":4096,"stream":0,"blocks":[)"
                           R"({"size":4096,"requested_size":0,"state":"inactive"}]}],"device_traces":[[]]})";
  EXPECT_EQ(CheckJson("overlap.json", json),
            "FAIL: " + TempPath("overlap.json") +
                ": segments[1]: segment 0x1800+4096 overlaps segment 0x1000+4096\n");
}

// Issue 17's expandable export: the unmapped range still lies inside the
// final segment, so undoing the unmap makes segments overlap.
TEST(MemoryVizWalk, FailsOnAnUnmapInsideAFinalSegment) {
  // Entry 0 is never undone (the viewer draws it as the final state), so
  // the unmap comes second.
  const std::string two = R"({"segments":[)" + kSegment +
                          R"(],"device_traces":[[)"
                          R"({"action":"alloc","addr":4096,"size":500,"stream":0},)"
                          R"({"action":"segment_unmap","addr":6144,"size":2048,"stream":0}]]})";
  EXPECT_EQ(CheckJson("unmap2.json", two),
            "FAIL: " + TempPath("unmap2.json") +
                ": device_traces[0][1]: segment 0x1800+2048 overlaps segment 0x1000+4096\n");
}

TEST(MemoryVizWalk, FailsOnABlockOutsideEverySegment) {
  const std::string json = R"({"segments":[)" + kSegment +
                           R"(],"device_traces":[[)"
                           R"({"action":"alloc","addr":4096,"size":500,"stream":0},)"
                           R"({"action":"free_completed","addr":65536,"size":100,"stream":0}]]})";
  EXPECT_EQ(CheckJson("outside.json", json),
            "FAIL: " + TempPath("outside.json") +
                ": device_traces[0][1]: block 0x10000+100 is not inside one segment (the viewer throws "
                "reading 'occupied' of null)\n");
}

TEST(MemoryVizWalk, FailsOnCategoriesWithoutUnknown) {
  const std::string json = R"({"segments":[)" + kSegment +
                           R"(],"device_traces":[[)"
                           R"({"action":"alloc","addr":4096,"size":500,"stream":0,"category":"weights"}]]})";
  EXPECT_EQ(CheckJson("categories.json", json),
            "FAIL: " + TempPath("categories.json") +
                ": categories ['weights'] lack 'unknown' (the viewer throws in annotate_snapshot)\n");
}

// The controls: every real snapshot PyTorch wrote passes.
TEST(MemoryVizWalk, RealSnapshotsPass) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  int files = 0;
  for (const std::string& path : SharedSnapshots()) {
    const std::string out = MemoryVizCheck(path);
    EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
    ++files;
  }
  EXPECT_GE(files, 17);
}

// Every registered policy that places buffers at addresses, on the
// fragmentation example; the two whose placements are no addresses are
// refused rather than written broken.
TEST(MemoryVizWalk, EveryPolicyExportPasses) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  const std::string ideal = TempPath("ideal.pickle");
  const CliRun refused =
      RunHbmsim("replay configs/examples/fragmentation.trace --allocator ideal --memory-viz " + ideal);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err,
            "hbmsim replay: --memory-viz: the ideal policy's placements are not addresses (alloc id 5 at "
            "0x8000000 overlaps a live buffer); the viewer cannot draw them\n");
  const CliRun paged =
      RunHbmsim("replay configs/examples/fragmentation.trace --allocator paged --memory-viz " +
                TempPath("paged.pickle"));
  EXPECT_EQ(paged.exit_code, 2);
  EXPECT_EQ(
      paged.err,
      "hbmsim replay: --memory-viz: the paged policy's alloc at 0x0 lies in no segment (its address space "
      "is not made of segments); the viewer cannot draw it\n");
  for (const std::string policy : {"bfc", "torch", "tpu", "cuda_async", "first_fit", "best_fit"}) {
    const std::string out = TempPath(policy + ".pickle");
    const CliRun run = RunHbmsim("replay configs/examples/fragmentation.trace --allocator " + policy +
                                 " --bytes-limit 256MiB --memory-viz " + out);
    EXPECT_LE(run.exit_code, 1) << policy << ": " << run.err;
    const std::string check = MemoryVizCheck(out);
    EXPECT_EQ(check.find("FAIL"), std::string::npos) << policy << ": " << check;
    EXPECT_NE(check.find("device 0:"), std::string::npos) << policy << ": " << check;
  }
}

// Every generator, replayed by the three modelled policies.
TEST(MemoryVizWalk, EveryGeneratorExportPasses) {
  if (!HavePython()) GTEST_SKIP() << "python3 missing";
  const std::vector<std::string> gens = {"training --layers 2 --hidden 256 --steps 2",
                                         "inference --requests 8", "churn --events 3000"};
  for (const std::string& gen : gens) {
    const std::string trace = TempPath("gen.trace");
    ASSERT_EQ(RunHbmsim("gen " + gen + " --seed 7 -o " + trace).exit_code, 0) << gen;
    for (const std::string policy : {"bfc", "torch", "tpu"}) {
      const std::string out = TempPath(policy + ".json");
      const CliRun run =
          RunHbmsim("replay " + trace + " --allocator " + policy + " --bytes-limit 4GiB --memory-viz " + out);
      EXPECT_LE(run.exit_code, 1) << gen << " " << policy << ": " << run.err;
      const std::string check = MemoryVizCheck(out);
      EXPECT_EQ(check.find("FAIL"), std::string::npos) << gen << " " << policy << ": " << check;
    }
  }
}

}  // namespace
}  // namespace hbmsim::testing
