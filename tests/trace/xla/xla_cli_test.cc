// End to end: `hbmsim replay` and `hbmsim convert` open every XLA file kind
// by content; `hbmsim diagnose` reports the rematerialization warning, alone
// and next to a BFC dump; malformed input is one line on stderr and exit 2.
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/sim/cli/cli_test_util.h"
#include "tests/trace/xla/xla_test_util.h"

namespace hbmsim::trace::xla {
namespace {

using ::hbmsim::testing::ReadFile;
using ::hbmsim::testing::RunHbmsim;
using ::hbmsim::testing::TempPath;
using ::hbmsim::testing::WriteFile;

const std::string kRematLine =
    "W hlo_rematerialization.cc:3005] Can't reduce memory use below 16.00GiB (17179869184 bytes) by "
    "rematerialization; only reduced to 19.00GiB (20401094656 bytes), down from 24.00GiB (25769803776 bytes) "
    "originally\n";

const std::string kRematReport =
    "XLA rematerialization warning (line 2): the compiler could not fit the program under its limit\n"
    "  remat target (limit):     17179869184 (16.00GiB)\n"
    "  peak after remat:         20401094656 (19.00GiB)\n"
    "  peak before remat:        25769803776 (24.00GiB)\n"
    "  over the target:           3221225472 (3.00GiB)\n"
    "  saved by remat:            5368709120 (5.00GiB)\n"
    "  what-if: the program needs at least 20401094656 bytes (19.00GiB) of live buffers at its peak (XLA's "
    "no-fragmentation count), so no allocator fits it in less; a device limit must exceed that plus "
    "fragmentation, and the remat target must grow by at least 3221225472 bytes for the pass to succeed\n";

TEST(XlaDiagnoseCli, ALogWithOnlyARematWarningIsAReport) {
  const std::string json = TempPath("remat.json");
  const auto run = RunHbmsim("diagnose tests/data/xla/remat.log --json " + json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, kRematReport);
  EXPECT_EQ(run.err, "");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["dumps"].size(), 0u);
  EXPECT_EQ(j["xla_rematerialization"][0]["limit"], 17179869184u);
  EXPECT_EQ(j["xla_rematerialization"][0]["after"], 20401094656u);
  EXPECT_EQ(j["xla_rematerialization"][0]["before"], 25769803776u);
  EXPECT_EQ(j["xla_rematerialization"][0]["over_target"], 3221225472u);
  EXPECT_EQ(j["xla_rematerialization"][0]["line"], 2);
}

TEST(XlaDiagnoseCli, TheWarningFollowsTheBfcReportOfTheSameLog) {
  const std::string dump = ReadFile(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/20.txt");
  ASSERT_FALSE(dump.empty());
  const std::string log = TempPath("mixed.log");
  WriteFile(log, "compiling\n" + kRematLine + dump);
  const std::string json = TempPath("mixed.json");
  const auto run = RunHbmsim("diagnose " + log + " --json " + json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("fragmentation"), std::string::npos) << run.out;
  ASSERT_GT(run.out.size(), kRematReport.size());
  EXPECT_EQ(run.out.substr(run.out.size() - kRematReport.size() - 1), "\n" + kRematReport);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["dumps"].size(), 1u);
  EXPECT_EQ(j["xla_rematerialization"][0]["after"], 20401094656u);
}

TEST(XlaDiagnoseCli, ACutWarningIsAOneLineErrorNamingTheLine) {
  const std::string log = TempPath("cut.log");
  WriteFile(log, "x\nCan't reduce memory use below 16.00GiB (17179869184 bytes) by remat\n");
  const auto run = RunHbmsim("diagnose " + log);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "hbmsim diagnose: " + log +
                ":2: expected \"Can't reduce memory use below A (a bytes) by rematerialization; only reduced "
                "to B (b bytes), down from C (c bytes) originally\"\n");
}

const std::string kSmallWarnings =
    "hbmsim {cmd}: warning: tests/data/xla/small-buffer-assignment.txt: 1 of 9 assigned values have no live "
    "range "
    "in tests/data/xla/small-live-range.txt and are not replayed (first: called.7 at line 11); the live "
    "ranges "
    "cover only the flattened schedule, not the values of computations it does not list\n"
    "hbmsim {cmd}: warning: tests/data/xla/small-live-range.txt: 1 of 9 live ranges name no assigned value "
    "and "
    "are not replayed (first: const.8{{}} at line 19); the buffer assignment gave them no memory\n";

const std::string kSmallTraceEvents =
    "alloc 0 1024 t=0 tag=p0 addr=0x0\n"
    "alloc 1 512 t=1 tag=p1 addr=0x400\n"
    "alloc 2 1024 t=2 tag=add.1 addr=0x600\n"
    "alloc 3 1024 t=3 tag=mul.2 addr=0xa00\n"
    "free 1 t=3\n"
    "free 2 t=3\n"
    "alloc 4 1024 t=4 tag=neg.3 addr=0x600\n"
    "alloc 7 256 t=5 tag=fusion.6{1} addr=0xe10\n"
    "free 4 t=5\n"
    "alloc 6 16 t=6 tag=tuple.5{} addr=0xe00\n"
    "free 0 t=6\n"
    "free 3 t=6\n"
    "free 6 t=6\n"
    "free 7 t=6\n";

const std::string kHeapTraceEvents =
    "alloc 1 1024 t=0 tag=p.1 addr=0x0\n"
    "alloc 2 2048 t=1 tag=add.2 addr=0x400\n"
    "alloc 4 512 t=4 tag=mul.4 addr=0xc00\n"
    "free 2 t=5\n"
    "free 1 t=6\n"
    "free 4 t=7\n"
    "alloc 5 4096 t=8 tag=big.5 device=1\n"
    "free 5 t=9 device=1\n";

// The events of a converted trace: its lines that are not `#` comments.
std::string EventsOf(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl - at + 1);
    if (!line.starts_with("#")) out += line;
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

TEST(XlaConvertCli, EitherFileOfTheTextPairConvertsToTheSameEvents) {
  for (const std::string f : {"small-buffer-assignment.txt", "small-live-range.txt"}) {
    const std::string out = TempPath("pair.trace");
    const auto run = RunHbmsim("convert tests/data/xla/" + f + " " + out);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err, fmt::format(fmt::runtime(kSmallWarnings), fmt::arg("cmd", "convert"))) << f;
    const std::string text = ReadFile(out);
    EXPECT_EQ(EventsOf(text), kSmallTraceEvents) << f;
    EXPECT_NE(text.find("# source: xla buffer-assignment + live-range\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# warning: tests/data/xla/small-buffer-assignment.txt: 1 of 9 assigned values"),
              std::string::npos)
        << text;
  }
}

TEST(XlaConvertCli, AppendedLiveRangesAndBothProtoKindsConvert) {
  const std::string out = TempPath("appended.trace");
  auto run = RunHbmsim("convert tests/data/xla/appended-buffer-assignment.txt " + out);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(EventsOf(ReadFile(out)), kSmallTraceEvents);
  for (const std::string f : {"heap-trace.buffer_assignment.pb", "heap-trace.hlo_proto.pb"}) {
    const std::string pb_out = TempPath("heap.trace");
    run = RunHbmsim("convert tests/data/xla/" + f + " " + pb_out);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err, "");
    EXPECT_EQ(EventsOf(ReadFile(pb_out)), kHeapTraceEvents) << f;
  }
}

TEST(XlaReplayCli, TextPairUnderBfcPlacesEveryValueAndReportsThePeak) {
  const std::string csv = TempPath("placements.csv");
  const auto run = RunHbmsim(
      "replay tests/data/xla/small-buffer-assignment.txt --allocator bfc --bytes-limit 1MiB "
      "--placements " +
      csv);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, fmt::format(fmt::runtime(kSmallWarnings), fmt::arg("cmd", "replay")));
  EXPECT_NE(
      run.out.find("Peak live bytes (the lower bound no allocator can beat): 3584 (3.5KiB) at event 3\n"),
      std::string::npos)
      << run.out;
  // BFC (no coalescing of regions, best fit) against XLA's addr=: neg.3 lands
  // in the 1536-byte hole of p1 + add.1, tuple.5 in the 256-byte minimum chunk.
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,0,1024,ok,0,1024\n"
            "1,1,512,ok,1024,512\n"
            "2,2,1024,ok,1536,1024\n"
            "3,3,1024,ok,2560,1024\n"
            "6,4,1024,ok,1024,1536\n"
            "7,7,256,ok,3584,256\n"
            "9,6,16,ok,1024,256\n");
}

TEST(XlaReplayCli, CheckRecordedComparesThePolicyWithXlasOwnPlacement) {
  // From the placements above: p0, p1, add.1 and mul.2 land where XLA put
  // them; neg.3, fusion.6{1} and tuple.5{} do not.
  const std::string json = TempPath("recorded.json");
  auto run = RunHbmsim(
      "replay tests/data/xla/small-buffer-assignment.txt --allocator bfc --bytes-limit 1MiB "
      "--check-recorded --json " +
      json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"]["allocs_matched"], 4);
  EXPECT_EQ(j["recorded_check"]["allocs_total"], 7);
  // The proto's three allocs of heap 0 are packed by BFC exactly as XLA did.
  run = RunHbmsim(
      "replay tests/data/xla/heap-trace.buffer_assignment.pb --allocator bfc --bytes-limit 1MiB "
      "--check-recorded --json " +
      json);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["recorded_check"]["allocs_matched"], 3);
  EXPECT_EQ(j["recorded_check"]["allocs_total"], 3);
}

TEST(XlaReplayCli, EachHeapTraceIsADevice) {
  auto run =
      RunHbmsim("replay tests/data/xla/heap-trace.buffer_assignment.pb --allocator bfc --bytes-limit 1MiB");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  events:     6 replayed of 8 read (device 0, 2 on other devices skipped)\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("Peak live bytes (the lower bound no allocator can beat): 3584 (3.5KiB)"),
            std::string::npos);
  run = RunHbmsim(
      "replay tests/data/xla/heap-trace.hlo_proto.pb --allocator bfc --bytes-limit 1MiB --device 1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  events:     2 replayed of 8 read (device 1, 6 on other devices skipped)\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("Peak live bytes (the lower bound no allocator can beat): 4096 (4.0KiB)"),
            std::string::npos);
}

// Malformed input of each kind: exit 2 and one stderr line naming the file and line (or byte offset).
TEST(XlaReplayCli, MalformedInputIsOneLineAndExitTwo) {
  const std::string ba = TempPath("bad-buffer-assignment.txt");
  WriteFile(ba, "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8): s32[2]\n");
  auto run = RunHbmsim("replay " + ba + " --allocator bfc --bytes-limit 1MiB");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "hbmsim replay: " + ba +
                ":3: expected \"value: <id name[ @color]> (size=<bytes>,offset=<bytes>): <shape>\", got "
                "\"value: <0 a @0> (size=8): s32[2]\"\n");

  const std::string pair = TempPath("pair");
  WriteFile(pair + "-buffer-assignment.txt",
            "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8,offset=0): s32[2]\n");
  WriteFile(pair + "-live-range.txt", "HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:3-1\n");
  run = RunHbmsim("convert " + pair + "-live-range.txt " + TempPath("out.trace"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "hbmsim convert: " + pair + "-live-range.txt:3: a{} starts at 3 after its end 1\n");

  const std::string pb = TempPath("cut.pb");
  WriteFile(pb, ReadFile(kXlaData + "heap-trace.buffer_assignment.pb").substr(0, 300));
  run = RunHbmsim("replay " + pb + " --allocator bfc --bytes-limit 1MiB");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "hbmsim replay: " + pb +
                ": byte offset 272: not a valid protobuf: field heap_simulator_traces of length 38 runs "
                "past the end (26 bytes left)\n");
}

}  // namespace
}  // namespace hbmsim::trace::xla
