// `hbmsim replay SNAPSHOT --allocator torch` end to end (HBMSIM_BINARY): the
// recorded addresses and segments reproduced (MANIFEST.md's rows), the
// settings taken from the snapshot, the recorded OOM of the H100 job, and
// every shipped snapshot loading.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

CliRun Replay(const std::string& file, const std::string& flags, const std::string& json) {
  return RunHbmsim("replay " + kTorchSnapshotDir + file + " --allocator torch " + flags + " --json " + json);
}

TEST(ReplaySnapshotCliTest, SmallTraceFromEmptyIsExact) {
  const std::string json = TempPath("small.json");
  const CliRun r = Replay("small_trace_from_empty.pickle", "--check-recorded", json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":36,"allocs_total":36,"segments_matched":9,"segments_total":9})");
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 3781165056);
  EXPECT_EQ(j["allocator"]["bytes_limit_source"], "none: unlimited (the recording records no OOM)");
  EXPECT_NE(r.out.find("\nRecorded check: allocs 36/36, segments 9/9\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  segment_alloc   9/9 matched\n"), std::string::npos);
  EXPECT_NE(r.out.find("| GPU reserved memory   |   3606 MiB |   3606 MiB |   3606 MiB |      0 B   |\n"),
            std::string::npos);
}

// 96 segments and their live blocks are seeded; no new segment is needed.
TEST(ReplaySnapshotCliTest, Gen5StartsFromItsRebuiltInitialState) {
  const std::string json = TempPath("gen5.json");
  const CliRun r = Replay("gen5_user_metadata_compile_context.pickle", "--check-recorded", json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":2162,"allocs_total":2162,"segments_matched":0,"segments_total":0})");
  EXPECT_EQ(j["recording"]["initial_segments"], 96);
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 4238344192);
  EXPECT_EQ(j["counters"]["allocated_bytes.all.current"], 3072871424);
}

// gen1 blocks have no address, only history[0].addr; the 541 blocks live at the
// end (none allocated by the one-entry trace) are compared with the final state.
TEST(ReplaySnapshotCliTest, Gen1HistoryAddressesAreCompared) {
  const std::string json = TempPath("gen1.json");
  const CliRun r = Replay("gen1_history_addresses.pickle", "--check-recorded", json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":541,"allocs_total":541,"segments_matched":0,"segments_total":0})");
  EXPECT_EQ(j["recording"]["history_addresses"].dump(), R"({"matched":541,"not_compared":521,"total":541})");
  EXPECT_NE(
      r.out.find("  gen1 history:   541/541 live blocks at their recorded address (history[0]); 521 older "
                 "entries not compared (allocations made before the snapshot)\n"),
      std::string::npos)
      << r.out;
  const CliRun oom = Replay("gen1_legacy_history_at_oom.pickle", "--check-recorded", json);
  EXPECT_EQ(oom.exit_code, 0) << oom.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(json))["recorded_check"].dump(),
            R"({"allocs_matched":460,"allocs_total":460,"segments_matched":0,"segments_total":0})");
}

// Under bfc nothing is seeded: the live blocks are placed by BFC from address 0,
// so no recorded history address is reproduced.
TEST(ReplaySnapshotCliTest, Gen1HistoryMismatchesAreNamed) {
  const std::string json = TempPath("gen1bfc.json");
  const CliRun r =
      RunHbmsim("replay " + kTorchSnapshotDir +
                "gen1_history_addresses.pickle --allocator bfc --bytes-limit 4GiB --check-recorded "
                "--json " +
                json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(json))["recorded_check"].dump(),
            R"({"allocs_matched":0,"allocs_total":541,"segments_matched":0,"segments_total":0})");
  EXPECT_NE(
      r.out.find("  first history mismatch: recorded 0x7fbc5c000000 (8519680 B requested), simulated no live "
                 "block starts there\n"),
      std::string::npos)
      << r.out;
}

TEST(ReplaySnapshotCliTest, Cs336ForwardIsExact) {
  const std::string json = TempPath("fwd.json");
  const CliRun r = Replay("cs336_ctx128_forward.pickle", "--check-recorded", json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":2058,"allocs_total":2058,"segments_matched":289,"segments_total":289})");
  EXPECT_EQ(j["counters"]["reserved_bytes.all.current"], 19667091456);
}

// Device 1 of the H100 job at the capacity its OOM implies: the recorded OOM
// comes back at its event as a capacity OOM, with PyTorch's message.
TEST(ReplaySnapshotCliTest, H100ExpandableReproducesItsCapacityOom) {
  const std::string json = TempPath("h100.json");
  const CliRun r = Replay("h100x4_expandable_segments_oom.pickle", "--device 1 --check-recorded", json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["allocator"]["bytes_limit"], 84298432512);
  EXPECT_EQ(j["allocator"]["options"]["expandable_segments"], true);
  EXPECT_EQ(j["allocator"]["options"]["device_index"], 1);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["event"], 421);
  EXPECT_EQ(j["failures"][0]["kind"], "oom");
  EXPECT_EQ(j["failures"][0]["rounded"], 5308694528);
  EXPECT_EQ(j["recorded_check"].dump(),
            R"({"allocs_matched":199,"allocs_total":199,"segments_matched":40,"segments_total":40})");
  EXPECT_EQ(j["recording"]["segment_unmap"].dump(), R"({"matched":6,"recorded":6,"simulated":6})");
  const std::string message =
      "    CUDA out of memory. Tried to allocate 4.95 GiB. GPU 1 has a total capacity of 78.51 GiB of which "
      "91.25 MiB is free. Of the allocated memory 78.29 GiB is allocated by PyTorch, and 132.93 MiB is "
      "reserved "
      "by PyTorch but unallocated.";
  // The simulated failure's text is PyTorch's recorded message, word for word:
  // it prints once, under "Memory at the first failure", and so does memory_summary().
  const size_t first = r.out.find("\n" + message.substr(4));
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(message.substr(4), first + 2), std::string::npos);
  const size_t at = r.out.find(
      "  event 421 (device_traces[1][421]): recorded request 5308694528 B, recorded "
      "device_free 95682560 B\n"
      "    (the runtime's message for it is printed above, under \"Memory at the first failure\")\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    hbmsim verdict: oom (rounded 5308694528 B, free ", at), std::string::npos);
  const size_t summary = r.out.find("PyTorch CUDA memory summary");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_EQ(r.out.find("PyTorch CUDA memory summary", summary + 1), std::string::npos);
}

// The answer first: the verdict and the failing request's user frames (not
// torch's, not the interpreter's) open the report.
TEST(ReplaySnapshotCliTest, H100ReportOpensWithTheVerdictAndTheUsersFrames) {
  const CliRun r =
      RunHbmsim("replay " + kTorchSnapshotDir + "h100x4_expandable_segments_oom.pickle --allocator torch --device 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string verdict =
      "Verdict: 1 of 200 allocations failed on device 1 with torch under the limit 84298432512 B (78.51GiB) "
      "(from auto (reserved at the recorded OOM + its device_free))\n"
      "(1 oom, 0 fragmentation). The first failed at event 421, asking for 5308694528 B (4.94GiB).\n"
      "It is oom: it needed 5308694528 B (4.94GiB) and only 235073536 B (224.18MiB) was free in all, "
      "5073620992 B (4.72GiB) short.\n";
  const std::string request =
      "\n"
      "Failing request: id 200 at event 421, 5308694528 B (4.94GiB) requested\n"
      "  tag:    oom\n"
      "  stack:  2 user frames of 57 recorded (innermost first):\n"
      "    /mnt/data3/haoyangsun/CurProject/src/train/models.py:181 in update_nodes\n"
      "    /mnt/data3/haoyangsun/CurProject/src/train/models.py:231 in forward\n"
      "\n"
      "Where the memory was at the first failure (event 421): 84063351764 bytes (78.29GiB) held in 111 "
      "buffers\n"
      "  by tag: no held buffer carries a tag\n"
      "  by top user frame\n"
      "     37.9%     31867719984   29.68GiB      12 buf  models.py:174 update_nodes\n"
      "     31.6%     26543472640   24.72GiB       5 buf  models.py:181 update_nodes\n";
  EXPECT_EQ(r.out.substr(0, verdict.size() + request.size()), verdict + request) << r.out;
  const CliRun quiet = RunHbmsim(
      "replay " + kTorchSnapshotDir + "h100x4_expandable_segments_oom.pickle --allocator torch --device 1 --quiet");
  EXPECT_EQ(quiet.exit_code, 1) << quiet.err;
  EXPECT_EQ(quiet.out, verdict);
}

TEST(ReplaySnapshotCliTest, SetOverridesTheSnapshotSettings) {
  const std::string json = TempPath("set.json");
  const CliRun r = Replay("h100x4_expandable_segments_oom.pickle",
                          "--device 1 --set expandable_segments=false --set device_index=5", json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["allocator"]["options"]["expandable_segments"], false);
  EXPECT_EQ(j["allocator"]["options"]["device_index"], 5);
}

// A state snapshot (no trace on any device) is analysed, not refused; a file
// with traces, asked for a device without one, is an error on one line.
TEST(ReplaySnapshotCliTest, StateSnapshotIsAnalysedAndATracelessDeviceIsExit2) {
  const CliRun r = RunHbmsim("replay " + kTorchSnapshotDir + "empty_4dev_expandable_maxsplit64.pickle --allocator torch");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string head = kTorchSnapshotDir +
                           "empty_4dev_expandable_maxsplit64.pickle holds an allocator state and no trace to "
                           "replay: its state";
  EXPECT_EQ(r.out.substr(0, head.size()), head);
  EXPECT_NE(r.out.find("Segments: 0 (0 listed"), std::string::npos) << r.out;
  const CliRun dev3 =
      RunHbmsim("replay " + kTorchSnapshotDir + "h100x4_expandable_segments_oom.pickle --allocator torch --device 3");
  EXPECT_EQ(dev3.exit_code, 2);
  EXPECT_EQ(dev3.err,
            "hbmsim replay: " + kTorchSnapshotDir +
                "h100x4_expandable_segments_oom.pickle: no trace for device 3 (devices with traces: 0, "
                "1, 2)\n");
}

// The commands that ask about a sequence of requests refuse a state snapshot
// on one line that names the command which reads it.
TEST(ReplaySnapshotCliTest, SizeAdviseAndCompareOfAStateSnapshotPointToInspect) {
  const std::string file = kTorchSnapshotDir + "state_only_tiny.pickle";
  for (const std::string command : {"size", "advise", "compare"}) {
    const CliRun r = RunHbmsim(command + " " + file + " --allocator" + (command == "compare" ? "s" : "") +
                               " torch");
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, "hbmsim " + command + ": " + file +
                         ": an allocator state with no trace (a snapshot taken without "
                         "_record_memory_history), so no request to size or compare; `hbmsim inspect " +
                         file + "` analyses the state (so does `hbmsim replay`)\n")
        << command;
  }
}

TEST(ReplaySnapshotCliTest, BytesLimitAutoNeedsARecordedOom) {
  const CliRun r =
      RunHbmsim("replay " + kTorchSnapshotDir + "small_trace_from_empty.pickle --allocator torch --bytes-limit auto");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim replay: --bytes-limit auto: " + kTorchSnapshotDir +
                       "small_trace_from_empty.pickle records no oom on device 0; pass a size\n");
}

// Every shipped file loads: traces replay (0 or 1), state-only files are
// analysed (0, the state's reserved bytes in the analysis). Small and
// mid-size files only; the large ones are in the slow suite.
TEST(ReplaySnapshotCliTest, EveryShippedSnapshotLoads) {
  const std::vector<std::pair<std::string, bool>> files = {
      {"gen1_legacy_history_at_oom.pickle", false},       {"segment_alloc_free_churn_4dev.pickle", false},
      {"gen5_medium_512_training.pickle", false},         {"state_only_tiny.pickle", true},
      {"state_only_expandable_maxsplit128.pickle", true}, {"gen2_segments_only_list.pkl", true},
  };
  for (const auto& [file, state_only] : files) {
    const CliRun r = RunHbmsim("replay " + kTorchSnapshotDir + file + " --allocator torch");
    EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
    EXPECT_EQ(r.out.find("holds an allocator state and no trace to replay") != std::string::npos, state_only)
        << file;
  }
}

// `hbmsim convert` writes every device: live-at-start blocks first (tag=preexisting), recorded addresses as
// addr=, the oom as an alloc + free; the text replays with the same addresses.
TEST(ReplaySnapshotCliTest, ConvertWritesTheTextFormatWithRecordedAddresses) {
  const std::string gen5 = TempPath("gen5.trace");
  CliRun r = RunHbmsim("convert " + kTorchSnapshotDir + "gen5_user_metadata_compile_context.pickle " + gen5);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(gen5);
  EXPECT_EQ(text.find("# hbmsim-trace v1\n# source: torch-snapshot\n# generation: 5\n# devices: 0\n"
                      "# allocator: torch\n"
                      "alloc 1 154389504 tag=preexisting addr=0x737a36000000\n"),
            0u)
      << text.substr(0, 300);
  EXPECT_EQ(CountLines(text), 5 + 447 + 2162 * 3);
  const std::string h100 = TempPath("h100.trace");
  r = RunHbmsim("convert " + kTorchSnapshotDir + "h100x4_expandable_segments_oom.pickle " + h100);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(h100).find(
                "\nalloc 2634 5308694528 t=1757253257949855 tag=oom device=1\nfree 2634 device=1\n"),
            std::string::npos);
  const std::string small = TempPath("small.trace");
  ASSERT_EQ(RunHbmsim("convert " + kTorchSnapshotDir + "small_trace_from_empty.pickle " + small).exit_code, 0);
  const std::string json = TempPath("small.json");
  r = RunHbmsim("replay " + small + " --allocator torch --bytes-limit 8GiB --check-recorded --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(json))["recorded_check"].dump(),
            R"({"allocs_matched":36,"allocs_total":36,"segments_matched":0,"segments_total":0})");
}

}  // namespace
}  // namespace hbmsim::testing
