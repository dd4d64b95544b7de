// Issue 48 through the real binary, each item with the command a user typed:
// bytes that are not UTF-8 reaching a JSON writer, an XLA dump's partner file
// named as an output, an endless pipe and the names outputs give a pipe, a
// temporary left by a killed run, a spec asking for gigabytes, command-line
// values that are empty or out of range, and an RMM log with a failure row.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// The small XLA dump pair as X-buffer-assignment.txt and X-live-range.txt in `dir`.
std::string CopyXlaPair(const std::string& dir, const std::string& x,
                        const std::string& assignment_edit = "") {
  std::string assignment = Slurp(Source("tests/data/xla/small-buffer-assignment.txt"));
  if (!assignment_edit.empty()) {
    const size_t at = assignment.find("<2 add.1 @0>");
    assignment.replace(at, 12, assignment_edit);
  }
  Spit(dir + "/" + x + "-buffer-assignment.txt", assignment);
  const std::string ranges = Slurp(Source("tests/data/xla/small-live-range.txt"));
  Spit(dir + "/" + x + "-live-range.txt", ranges);
  return ranges;
}

void ExpectOneLine(const Result& r, const std::string& line) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, line + "\n");
  EXPECT_EQ(r.out, "");
}

// Item 1: `replay --json` of an XLA dump with one byte inserted was exit 3 (type_error.316).
TEST(Hostile, AByteThatIsNotUtf8IsReplacedInTheJsonReport) {
  const std::string dir = TestDir();
  CopyXlaPair(dir, "x", "<2 add\xff.1 @0>");
  const Result r =
      Hbmsim(dir, "replay x-buffer-assignment.txt --allocator bfc --bytes-limit 1GiB --json r.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir + "/r.json"));
  const std::string notes = j.dump();
  EXPECT_NE(notes.find(std::string("add") + std::string(kReplacement) + ".1"), std::string::npos) << notes;
}

// Item 1: `sweep SPEC --list` of a spec naming a file whose name is not UTF-8.
TEST(Hostile, ASweepListReplacesBytesThatAreNotUtf8) {
  const std::string dir = TestDir();
  Spit(dir + "/a\xff.trace", Slurp(Source("configs/examples/fragmentation.trace")));
  Spit(dir + "/s.yaml", "recordings: ['a\xff.trace']\nallocators: [bfc]\nlimits: [256MiB]\n");
  const Result r = Hbmsim(dir, "sweep s.yaml --list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json key = nlohmann::json::parse(r.out);
  EXPECT_EQ(key["recording"], "a" + std::string(kReplacement) + ".trace");
}

// Item 1: `sweep report` exited 3 (type_error.302, null for a boolean) on an advise task run on a
// recording with no limit, whose answer has "fits_at_limit": null.
TEST(Hostile, ASweepReportReadsANullFitAsNotFitting) {
  const std::string dir = TestDir();
  std::filesystem::create_directories(dir + "/out");
  Spit(dir + "/out/task-000000.json",
       R"({"key":{"task":0,"recording":"s.pickle","allocator":"torch","settings":"","question":"advise",)"
       R"("bytes_limit":null,"device":null},"exit_code":0,"error":null,)"
       R"("result":{"today":{"fits_at_limit":null},"candidates":[{"fits_at_limit":null},7]}})"
       "\n");
  const Result r = Hbmsim(dir, "sweep report out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "\ntorch      (as configured)                              advise             -     1     0      1"
          "      0              -              -              -              -\n"),
      std::string::npos)
      << r.out;
}

// Item 2: the partner X-live-range.txt is read implicitly, so it is an input no output may replace.
TEST(Hostile, AnXlaDumpsPartnerFileIsAnInput) {
  const std::string dir = TestDir();
  const std::string ranges = CopyXlaPair(dir, "x");
  ExpectOneLine(
      Hbmsim(dir,
             "replay x-buffer-assignment.txt --allocator bfc --bytes-limit 1GiB --json x-live-range.txt"),
      "hbmsim replay: --json x-live-range.txt is the input TRACE's partner x-live-range.txt; refusing to "
      "overwrite it");
  ExpectOneLine(
      Hbmsim(dir, "convert x-buffer-assignment.txt x-live-range.txt"),
      "hbmsim convert: OUT x-live-range.txt is the input IN's partner x-live-range.txt; refusing to "
      "overwrite it");
  const std::string assignment = Slurp(dir + "/x-buffer-assignment.txt");
  ExpectOneLine(
      Hbmsim(dir, "size x-live-range.txt --allocator bfc --json x-buffer-assignment.txt"),
      "hbmsim size: --json x-buffer-assignment.txt is the input TRACE's partner x-buffer-assignment.txt; "
      "refusing to overwrite it");
  EXPECT_EQ(Slurp(dir + "/x-live-range.txt"), ranges);
  EXPECT_EQ(Slurp(dir + "/x-buffer-assignment.txt"), assignment);
  EXPECT_EQ(Hbmsim(dir, "replay x-buffer-assignment.txt --allocator bfc --bytes-limit 1GiB").exit_code, 0);
}

// Item 3: `hbmsim replay /dev/zero` spooled until the disk was full.
TEST(Hostile, AnEndlessPipeEndsAtTheCap) {
  const std::string dir = TestDir();
  ASSERT_EQ(::setenv("HBMSIM_PIPE_LIMIT", "1MiB", 1), 0);
  ASSERT_EQ(::setenv("TMPDIR", dir.c_str(), 1), 0);
  const Result r = Hbmsim(dir, "replay /dev/zero --allocator bfc");
  ::unsetenv("HBMSIM_PIPE_LIMIT");
  ::unsetenv("TMPDIR");
  ExpectOneLine(
      r,
      "hbmsim replay: cannot read /dev/zero: more than 1048576 B (1.00MiB) piped in, the most spooled "
      "to " +
          dir + "; give it as a file, or raise the cap with HBMSIM_PIPE_LIMIT=SIZE");
  EXPECT_EQ(Names(dir), std::set<std::string>{});  // the spool is gone with the process
}

// Item 3: outputs name a piped input as the user did, never /proc/self/fd/N.
TEST(Hostile, OutputsNameAPipeAsTheUserDid) {
  const std::string dir = TestDir();
  Spit(dir + "/x.txt", Slurp(Source("tests/data/xla/appended-buffer-assignment.txt")));
  const Result dash = Shell(dir, "cat x.txt | $HBMSIM convert - dash.trace");
  EXPECT_EQ(dash.exit_code, 0) << dash.err;
  EXPECT_NE(Slurp(dir + "/dash.trace").find("\n# xla_live_ranges: <stdin>\n"), std::string::npos);
  EXPECT_EQ(dash.err.find("/proc/self"), std::string::npos) << dash.err;
  const Result stdin_path = Shell(dir, "cat x.txt | $HBMSIM convert /dev/stdin dev.trace");
  EXPECT_EQ(stdin_path.exit_code, 0) << stdin_path.err;
  EXPECT_NE(Slurp(dir + "/dev.trace").find("\n# xla_live_ranges: /dev/stdin\n"), std::string::npos);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  const Result fifo = Shell(dir, "cat x.txt > fifo & $HBMSIM convert fifo fifo.trace; wait");
  EXPECT_EQ(fifo.exit_code, 0) << fifo.err;
  EXPECT_NE(Slurp(dir + "/fifo.trace").find("\n# xla_live_ranges: fifo\n"), std::string::npos);
  Spit(dir + "/p.xplane.pb", Slurp(Source("tests/fuzz/corpus/xplane/small.xplane.pb")));
  const Result profile = Shell(dir, "cat p.xplane.pb | $HBMSIM diagnose - --json d.json");
  EXPECT_EQ(profile.exit_code, 0) << profile.err;
  EXPECT_EQ(nlohmann::json::parse(Slurp(dir + "/d.json"))["source"], "<stdin>");
  EXPECT_EQ(profile.out.rfind("Profile <stdin> (xplane, tensorflow): 1 allocator\n", 0), 0u) << profile.out;
}

// Item 4: a temporary a SIGKILLed run left is removed by the next run writing there, only when its writer is
// gone.
TEST(Hostile, AStaleTemporaryIsRemovedByTheNextRun) {
  const std::string dir = TestDir();
  Spit(dir + "/t.trace", Slurp(Source("configs/examples/fragmentation.trace")));
  const pid_t gone = [] {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
  }();
  const std::string stale = fmt::format(".r.json.hbmsim-{}-Ab12Cd", gone);
  const std::string live = fmt::format(".r.json.hbmsim-{}-Ef34Gh", ::getpid());  // this test: alive
  Spit(dir + "/" + stale, std::string(1 << 20, 'x'));
  Spit(dir + "/" + live, "being written");
  const Result r = Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 256MiB --json r.json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Names(dir), (std::set<std::string>{"t.trace", "r.json", live}));
}

// Item 5: a 1 MB spec (one 1,000,000-character setting x 99,000 tasks) asked for ~99 GB and died of
// bad_alloc.
TEST(Hostile, AHugeSpecIsRefusedBeforeItIsMade) {
  const std::string dir = TestDir();
  Spit(dir + "/a.trace", Slurp(Source("configs/examples/fragmentation.trace")));
  Spit(dir + "/b.trace", Slurp(Source("configs/examples/fragmentation.trace")));
  std::string spec = "recordings: ['*.trace']\nallocators: [bfc]\nsettings:\n  allow_growth: " +
                     std::string(1'000'000, 'x') + "\nlimits: [";
  for (int i = 0; i < 49'500; ++i) spec += i == 0 ? "1GiB" : ",1GiB";
  Spit(dir + "/s.yaml", spec + "]\n");
  const Result r = Hbmsim(dir, "sweep s.yaml --list");
  ExpectOneLine(r, "hbmsim sweep: s.yaml:4: settings: allow_growth: a value of 1000000 bytes; at most 4096");
  EXPECT_LT(r.peak_rss_bytes, uint64_t{200} << 20);
}

// Item 6: command lines.
TEST(Hostile, CommandLineValuesAreChecked) {
  const std::string dir = TestDir();
  Spit(dir + "/t.trace", Slurp(Source("configs/examples/fragmentation.trace")));
  const std::string snapshot =
      Source("tests/fuzz/corpus/torch_snapshot/state_only_expandable_maxsplit128.pickle");
  ExpectOneLine(Hbmsim(dir, "replay " + snapshot + " --device 99"),
                "hbmsim replay: --device 99: " + snapshot +
                    " holds nothing on device 99 (devices holding segments: 0, 1)");
  ExpectOneLine(Hbmsim(dir, "inspect " + snapshot + " --device 99"),
                "hbmsim inspect: --device 99: " + snapshot +
                    " holds nothing on device 99 (devices holding segments: 0, 1)");
  ExpectOneLine(Hbmsim(dir, "replay " + snapshot + " --device -1"),
                "hbmsim replay: --device -1: negative number '-1'");
  ExpectOneLine(
      Hbmsim(dir, "replay t.trace --allocator bfc --device 1180591620717411303424"),
      "hbmsim replay: --device 1180591620717411303424: '1180591620717411303424' does not fit in 64 bits");
  ExpectOneLine(Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 256MiB --memory-viz v.txt"),
                "hbmsim replay: --memory-viz v.txt: name the file OUT.pickle or OUT.pkl (the pickle "
                "pytorch.org/memory_viz loads) or OUT.json (the same snapshot as JSON)");
  EXPECT_EQ(Names(dir), std::set<std::string>{"t.trace"});
  EXPECT_EQ(Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 256MiB --memory-viz v.PKL").exit_code,
            1);
  ExpectOneLine(
      Hbmsim(dir, "frobnicate t.trace"),
      "hbmsim: unknown command 'frobnicate' (commands: advise, compare, completion, convert, diagnose, gen, "
      "help, inspect, presets, replay, scale, size, sweep; see hbmsim --help)");
  ExpectOneLine(Hbmsim(dir, "replay t.trace --allocator nodir/cfg.yaml"),
                "hbmsim replay: nodir/cfg.yaml: cannot open allocator config: No such file or directory");
}

// Found by fuzz_outputs' harness: a snapshot holding a state and no trace is answered with inspect's report,
// and --html, --perfetto, --memory-viz and --placements were left as empty files, exit 0. They are not
// written now, each with a note.
TEST(Hostile, AStateWithoutATraceWritesNoEmptyReplayFiles) {
  const std::string dir = TestDir();
  const std::string snapshot = Source("tests/fuzz/corpus/torch_snapshot/state_only_expandable_maxsplit128.pickle");
  const Result r = Hbmsim(dir, "replay " + snapshot + " --json r.json --html r.html --placements p.csv");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "hbmsim replay: --placements p.csv not written: " + snapshot +
                       " holds an allocator state and no trace to replay\n"
                       "hbmsim replay: --html r.html not written: " + snapshot +
                       " holds an allocator state and no trace to replay\n");
  EXPECT_EQ(Names(dir), std::set<std::string>{"r.json"});
}

// Item 7: every recording replay reads, convert writes: an RMM log's "allocate failure" row was
// `cannot write stream= on mark`.
TEST(Hostile, AnRmmLogWithAFailureRowConverts) {
  const std::string dir = TestDir();
  const std::string csv = Source("tests/data/rmm/two_streams.csv");
  const Result c = Hbmsim(dir, "convert " + csv + " t.trace");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(Slurp(dir + "/t.trace").find("\nmark rmm_allocate_failure:85899345920 t=30108313100\n"),
            std::string::npos)
      << Slurp(dir + "/t.trace");
  const Result from_csv = Hbmsim(dir, "replay " + csv + " --allocator bfc --bytes-limit 1GiB --quiet");
  const Result from_trace = Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 1GiB --quiet");
  EXPECT_EQ(from_csv.exit_code, from_trace.exit_code);
}

}  // namespace
}  // namespace hbmsim::testing
