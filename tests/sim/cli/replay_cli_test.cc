// End-to-end tests of `hbmsim replay` on the shipped examples: exit codes,
// verdicts, the placements CSV and the JSON report, with exact numbers.
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

constexpr char kTfConfig[] = "--allocator configs/bfc_tensorflow.yaml";

TEST(ReplayCliTest, FragmentationExampleFailsWithVerdictFragmentation) {
  const std::string json = TempPath("frag.json");
  CliRun r = RunHbmsim(std::string("replay configs/examples/fragmentation.trace ") + kTfConfig +
                       " --bytes-limit 256MiB --json " + json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("  outcome:    1 of 6 allocations failed (0 oom, 1 fragmentation)\n"),
            std::string::npos);
  EXPECT_NE(
      r.out.find("           7          5      100663296      100663296  fragmentation      134217728       "
                 "67108864  tag=grad_buffer  after mark forward_end\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("BFCAllocator dump for bfc\n"), std::string::npos);
  EXPECT_NE(r.out.find("Free  at c000000 of size 67108864 next 18446744073709551615\n"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(
      j["failures"].dump(),
      R"([{"after_mark":"forward_end","event":7,"free_bytes":134217728,"id":5,"kind":"fragmentation","largest_free_block_bytes":67108864,)"
      R"("requested":100663296,"rounded":100663296,"tag":"grad_buffer"}])");
  EXPECT_EQ(j["peak_live_bytes"], 268435456);
  EXPECT_EQ(
      j["allocator"]["options"].dump(),
      R"({"allow_growth":false,"first_region":2097152,"fragmentation_fraction":0.0,"garbage_collection":true,)"
      R"("region_coalescing":false})");
}

// The answer first: the verdict (with the program's mark), the failing
// request's tag, then the memory by tag at the failure (the two 64 MiB
// buffers that split the free space) and at the peak (all four).
TEST(ReplayCliTest, FragmentationReportOpensWithTheVerdictAndTheMemoryByTag) {
  CliRun r = RunHbmsim(std::string("replay configs/examples/fragmentation.trace ") + kTfConfig +
                       " --bytes-limit 256MiB");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string head =
      "Verdict: 1 of 6 allocations failed on device 0 with bfc under the limit 268435456 B (256.00MiB) (from "
      "--bytes-limit)\n"
      "(0 oom, 1 fragmentation). The first failed at event 7, after mark forward_end, asking for 100663296 B "
      "(96.00MiB).\n"
      "It is fragmentation: 134217728 B (128.00MiB) was free, enough for the 100663296 B (96.00MiB) it needed, "
      "but the largest free block\n"
      "was 67108864 B (64.00MiB), 33554432 B (32.00MiB) short.\n"
      "\n"
      "Failing request: id 5 at event 7, 100663296 B (96.00MiB) requested\n"
      "  tag:    grad_buffer\n"
      "\n"
      "Where the memory was at the first failure (event 7): 134217728 bytes (128.00MiB) held in 2 buffers\n"
      "  by tag\n"
      "     50.0%        67108864   64.00MiB       1 buf  act_l2\n"
      "     50.0%        67108864   64.00MiB       1 buf  weights\n"
      "  by op: the same as by tag\n";
  EXPECT_EQ(r.out.substr(0, head.size()), head);
  EXPECT_NE(r.out.find("Where the memory was at the peak (event 3): 268435456 bytes (256.00MiB) held in 4 buffers\n"
                       "  by tag\n"
                       "     25.0%        67108864   64.00MiB       1 buf  act_l1\n"
                       "     25.0%        67108864   64.00MiB       1 buf  act_l2\n"
                       "     25.0%        67108864   64.00MiB       1 buf  act_l3\n"
                       "     25.0%        67108864   64.00MiB       1 buf  weights\n"),
            std::string::npos)
      << r.out;
  const CliRun quiet = RunHbmsim(std::string("replay configs/examples/fragmentation.trace ") + kTfConfig +
                                 " --bytes-limit 256MiB --quiet");
  EXPECT_EQ(quiet.out, head.substr(0, head.find("\n\nFailing")) + "\n");
}

TEST(ReplayCliTest, OomExampleFailsWithVerdictOom) {
  const std::string json = TempPath("oom.json");
  CliRun r = RunHbmsim("replay configs/examples/oom.trace --allocator configs/bfc_jax.yaml --json " + json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(
      j["failures"].dump(),
      R"([{"after_mark":"step=0","event":3,"free_bytes":67108864,"id":3,"kind":"oom","largest_free_block_bytes":67108864,)"
      R"("requested":100663296,"rounded":100663296,"tag":"activations"}])");
  EXPECT_EQ(j["peak_live_bytes"], 301989888);
  EXPECT_EQ(j["allocator"]["bytes_limit"], 268435456);  // from `# device_bytes:`
  EXPECT_EQ(j["stats"].dump(),
            R"({"bytes_in_use":0,"bytes_limit":268435456,"bytes_reservable_limit":null,"bytes_reserved":0,)"
            R"("largest_alloc_size":134217728,"largest_free_block_bytes":268435456,"num_allocs":2,)"
            R"("peak_bytes_in_use":201326592,"peak_bytes_reserved":0,"peak_pool_bytes":268435456,)"
            R"("pool_bytes":268435456})");
}

TEST(ReplayCliTest, FitsExampleExitsZeroAndWritesEveryPlacement) {
  const std::string csv = TempPath("fits.csv");
  CliRun r =
      RunHbmsim(std::string("replay configs/examples/fits.trace ") + kTfConfig + " --placements " + csv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Every allocation fit.\n"), std::string::npos);
  // The 96 MiB request takes the whole coalesced 128 MiB chunk: BFC splits only
  // when the chunk is at least twice the request (or the rest >= 128 MiB).
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,67108864,ok,0,67108864\n"
            "1,2,67108864,ok,67108864,67108864\n"
            "2,3,67108864,ok,134217728,67108864\n"
            "3,4,67108864,ok,201326592,67108864\n"
            "7,5,100663296,ok,67108864,134217728\n");
}

TEST(ReplayCliTest, PlacementsListFailuresWithEmptyOffsetAndZeroBytesAsOk) {
  const std::string trace = TempPath("zero.trace");
  WriteFile(trace, "alloc 1 0\nalloc 2 300\nalloc 3 5000\nfree 3\nfree 2\nfree 1\n");
  const std::string csv = TempPath("zero.csv");
  CliRun r = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 4096 --placements " + csv);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,0,ok,,0\n"
            "1,2,300,ok,0,512\n"
            "2,3,5000,oom,,0\n");
}

TEST(ReplayCliTest, OnOomStopEndsAtTheFirstFailureContinueGoesOn) {
  const std::string trace = TempPath("twice.trace");
  // 8 KiB: the first request splits the region in two 4 KiB chunks, the next takes
  // the second, and both later ones fail.
  WriteFile(trace, "alloc 1 4096\nalloc 2 4096\nalloc 3 4096\nalloc 4 4096\n");
  const std::string json = TempPath("stop.json");
  CliRun stop =
      RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 8KiB --on-oom stop --json " + json);
  EXPECT_EQ(stop.exit_code, 1);
  nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["summary"]["events_read"], 3);
  EXPECT_EQ(j["summary"]["stopped_at_failure"], true);
  CliRun go = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 8KiB --json " + json);
  EXPECT_EQ(go.exit_code, 1);
  j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["failures"].size(), 2u);
  EXPECT_EQ(j["summary"]["events_read"], 4);
  EXPECT_EQ(j["stats"]["num_allocs"], 2);
}

TEST(ReplayCliTest, OutputsAreByteIdenticalAcrossRuns) {
  std::string outputs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string json = TempPath("same.json");
    const std::string csv = TempPath("same.csv");
    CliRun r = RunHbmsim(std::string("replay configs/examples/fragmentation.trace ") + kTfConfig +
                         " --json " + json + " --placements " + csv + " --paranoid");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    outputs[i] = r.out + ReadFile(json) + ReadFile(csv);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_GT(outputs[0].size(), 1000u);
}

TEST(ReplayCliTest, CheckRecordedComparesAddressesAndSaysWhatItCannotCheck) {
  const std::string trace = TempPath("addr.trace");
  WriteFile(trace, "alloc 1 256 addr=0\nalloc 2 256 addr=0x100\nalloc 3 256 addr=0x1000\n");
  const std::string json = TempPath("addr.json");
  CliRun r =
      RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 1MiB --check-recorded --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "hbmsim replay: --check-recorded: the trace has no segment events; only alloc addresses were "
            "compared\n");
  EXPECT_EQ(nlohmann::json::parse(ReadFile(json))["recorded_check"].dump(),
            R"({"allocs_matched":2,"allocs_total":3,"segments_matched":0,"segments_total":0})");
}

TEST(ReplayCliTest, SelectsOneDeviceOfAMultiDeviceTrace) {
  const std::string trace = TempPath("multi.trace");
  WriteFile(trace, "alloc 1 1024 device=1\nalloc 1 2048 device=0\nalloc 2 1024 device=1\n");
  const std::string json = TempPath("multi.json");
  CliRun r = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 1MiB --device 0 --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["summary"]["events_other_device"], 2);
  EXPECT_EQ(j["peak_live_bytes"], 2048);
}

TEST(ReplayCliTest, DetectsAnRmmLogByItsHeader) {
  const std::string log = TempPath("rmm.csv");
  WriteFile(log,
            "Thread,Time,Action,Pointer,Size,Stream\n"
            "1,08:21:48.312812,allocate,0x7f8b2a000000,1024,0x0\n"
            "1,08:21:48.312951,allocate,0x7f8b2a000400,2048,0x0\n"
            "1,08:21:48.313002,free,0x7f8b2a000000,1024,0x0\n");
  const std::string csv = TempPath("rmm_placements.csv");
  CliRun r = RunHbmsim("replay " + log + " --allocator bfc --bytes-limit 1MiB --placements " + csv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,1024,ok,0,1024\n"
            "1,2,2048,ok,1024,2048\n");
}

TEST(ReplayCliTest, FailureShowsTheRuntimeMessageOfEachPolicy) {
  CliRun tpu = RunHbmsim("replay configs/examples/oom.trace --allocator tpu");
  EXPECT_EQ(tpu.exit_code, 1) << tpu.err;
  EXPECT_NE(tpu.out.find(
                "Memory at the first failure (event 3, id 3):\nRESOURCE_EXHAUSTED: Error allocating device "
                "buffer: Attempting to allocate 96.00M. That was not possible. There are 64.00M free.; "
                "(0x0x1_HBM0)\nMemory map of tpu: 1 region\n"),
            std::string::npos)
      << tpu.out;
  CliRun torch = RunHbmsim("replay configs/examples/oom.trace --allocator torch");
  EXPECT_EQ(torch.exit_code, 1) << torch.err;
  EXPECT_NE(
      torch.out.find("Memory at the first failure (event 3, id 3):\nCUDA out of memory. Tried to allocate "
                     "96.00 MiB. GPU 0 has a total capacity of 256.00 MiB of which 64.00 MiB is free."),
      std::string::npos)
      << torch.out;
  EXPECT_NE(torch.out.find("|                  PyTorch CUDA memory summary, device ID 0                 |\n"),
            std::string::npos);
}

// The dump at the first failure is TF's DumpMemoryLog layout: `hbmsim diagnose`,
// which reads real TF logs, rebuilds the heap from it and every check passes.
TEST(ReplayCliTest, TheBfcDumpReadsBackThroughDiagnose) {
  const std::string report = TempPath("report.txt");
  CliRun r = RunHbmsim(std::string("replay configs/examples/fragmentation.trace ") + kTfConfig);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  WriteFile(report, r.out);
  const std::string json = TempPath("diagnosis.json");
  CliRun d = RunHbmsim("diagnose " + report + " --json " + json);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  int bfc_dumps = 0;
  for (const nlohmann::json& dump : j["dumps"]) {
    if (dump["allocator"] != "bfc") continue;  // our end-of-replay Stats block reads as a headless dump
    ++bfc_dumps;
    EXPECT_EQ(dump["verdict"], "fragmentation");
    EXPECT_EQ(dump["heap_rebuilt"], true);
    EXPECT_EQ(dump["rounded"], 100663296);
    EXPECT_EQ(dump["free_bytes"], 134217728);
    EXPECT_EQ(dump["largest_free_chunk"], 67108864);
    EXPECT_EQ(dump["pool_bytes"], 268435456);
    EXPECT_EQ(dump["checks"].size(), 8u);
    for (const nlohmann::json& check : dump["checks"]) EXPECT_EQ(check["passed"], true) << check.dump();
  }
  EXPECT_EQ(bfc_dumps, 1);
}

// bfc has no program model: a program is a buffer of its own id space (it takes
// the bottom 1 MiB here). tpu loads programs at the bottom and buffers at the top.
TEST(ReplayCliTest, ProgramsAreBuffersForBfcAndProgramsForTpu) {
  const std::string trace = TempPath("programs.trace");
  WriteFile(trace,
            "program_load 1 1048576\nalloc 1 1048576\nprogram_run 1\nfree 1\nprogram_unload 1\n"
            "program_load 2 3145728\nprogram_run 2\n");
  const std::string expected[] = {"1,1,1048576,ok,1048576,1048576\n", "1,1,1048576,ok,3145728,1048576\n"};
  const std::string allocators[] = {"bfc", "tpu"};
  for (int i = 0; i < 2; ++i) {
    const std::string csv = TempPath("programs_" + allocators[i] + ".csv");
    const std::string json = TempPath("programs_" + allocators[i] + ".json");
    CliRun r = RunHbmsim("replay " + trace + " --allocator " + allocators[i] +
                         " --bytes-limit 4MiB --paranoid --placements " + csv + " --json " + json);
    EXPECT_EQ(r.exit_code, 0) << allocators[i] << ": " << r.err;
    EXPECT_EQ(ReadFile(csv), "event,id,requested,status,offset,size\n" + expected[i]) << allocators[i];
    const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
    EXPECT_EQ(j["peak_live_bytes"], 3145728) << allocators[i];
    EXPECT_EQ(j["summary"]["allocs"], 1) << allocators[i];
  }
}

TEST(ReplayCliTest, ReadsATextTraceFromAPipe) {
  CliRun r =
      RunHbmsim("replay /dev/stdin --allocator bfc --bytes-limit 256MiB", "configs/examples/oom.trace");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("  outcome:    1 of 3 allocations failed (1 oom, 0 fragmentation)\n"),
            std::string::npos);
}

// A user's trace with attributes hbmsim does not define (issue 18 item 8):
// replayed, named once in the report, and kept by convert.
TEST(ReplayCliTest, OtherAttributesAreCountedOnceAndKeptByConvert) {
  const std::string fixture = "tests/data/traces/valid/open_attributes.trace";
  const std::string json = TempPath("open.json");
  CliRun r = RunHbmsim("replay " + fixture + " --allocator tpu --bytes-limit 1MiB --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("  attributes: 8 events carry attributes the replay does not use: step, phase, layer, "
                       "rank, build, note, why, reason\n"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["summary"]["other_attributes"]["events"], 8);
  EXPECT_EQ(j["summary"]["other_attributes"]["keys"].size(), 8u);
  EXPECT_EQ(j["summary"]["marks"], 3);
  const std::string hbt = TempPath("open.hbt");
  const std::string text = TempPath("open.trace");
  EXPECT_EQ(RunHbmsim("convert " + fixture + " " + hbt).exit_code, 0);
  EXPECT_EQ(RunHbmsim("convert " + hbt + " " + text).exit_code, 0);
  const std::string back = ReadFile(text);
  EXPECT_NE(back.find("\nmark forward_end step=0 phase=fwd\nalloc 1 4096 t=5 tag=activation layer=l0.qkv\n"),
            std::string::npos)
      << back;
  EXPECT_NE(back.find("\nprogram_unload 7 t=11 reason=eof\n"), std::string::npos) << back;
}

// Reserved, explained, worked by hand: BFC holds the whole 256 MiB; at the
// failure weights and act_l2 hold 128 MiB, and the two 64 MiB holes are a
// chunk in bin 18 (log2(64 MiB / 256)) and the free top of region 0, which
// the first alloc obtained; act_l1's free (event 5) made the first and
// act_l3's (event 6) the second.
TEST(ReplayCliTest, ReservedExplainedAtTheFailure) {
  const CliRun r = RunHbmsim(
      "replay configs/examples/fragmentation.trace --allocator bfc --bytes-limit 256MiB --no-advice");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(
                "  at the first failure (event 7): 268435456 B (256.00MiB) reserved, 134217728 B (128.00MiB) "
                "allocated\n"
                "               bytes              share  blocks  part\n"
                "            67108864   64.00MiB   25.0%       1  requested  act_l2\n"
                "            67108864   64.00MiB   25.0%       1  requested  weights\n"
                "                   0         0B    0.0%       2  rounding\n"
                "            67108864   64.00MiB   25.0%       1  free_chunk  bin 18\n"
                "            67108864   64.00MiB               1    freed by act_l1 (1 free)\n"
                "            67108864   64.00MiB   25.0%       1  region_tail  region 0\n"
                "            67108864   64.00MiB               1    freed by act_l3 (1 free)\n"
                "           268435456  256.00MiB  100.0%          reserved\n"
                "    the largest free blocks it keeps:\n"
                "            67108864   64.00MiB  free_chunk (bin 18) at 0x4000000; its region obtained for event 0 "
                "(id 1, weights); 64.00MiB of it freed by 1 free, the last at event 5 (id 2, act_l1)\n"
                "            67108864   64.00MiB  region_tail (region 0) at 0xc000000; its region obtained for event 0 "
                "(id 1, weights); 64.00MiB of it freed by 1 free, the last at event 6 (id 4, act_l3)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  at the peak of reserved (event 3): 268435456 B (256.00MiB) reserved, 268435456 B "
                       "(256.00MiB) allocated\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace hbmsim::testing
