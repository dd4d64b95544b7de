// Issue 18, items 1 and 4 through the real binary: no output is ever one of
// the inputs (same file through a symlink, a hard link, /dev/stdin or `-`),
// refused with exit 2 before anything is written; every failed write is exit
// 2 with one line naming the path and the reason.
#include <unistd.h>

#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

const std::string kReplay = "replay t.trace --allocator bfc --bytes-limit 256MiB";

// A copy of the README's fragmentation example in `dir`, as t.trace.
std::string CopyExample(const std::string& dir) {
  const std::string text = Slurp(Source("configs/examples/fragmentation.trace"));
  Spit(dir + "/t.trace", text);
  return text;
}

void ExpectRefused(const std::string& dir, const std::string& line, const std::string& message,
                   const std::string& path, const std::string& before) {
  SCOPED_TRACE(line);
  const Result r = Hbmsim(dir, line);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Slurp(dir + "/" + path), before);
}

TEST(InputIsOutput, ConvertOntoItsInputIsRefused) {
  const std::string dir = TestDir();
  const std::string text = CopyExample(dir);
  ExpectRefused(dir, "convert t.trace t.trace",
                "hbmsim convert: OUT t.trace is the input IN t.trace; refusing to overwrite it", "t.trace", text);
  ASSERT_EQ(::symlink("t.trace", (dir + "/link.trace").c_str()), 0);
  ExpectRefused(dir, "convert t.trace link.trace",
                "hbmsim convert: OUT link.trace is the input IN t.trace; refusing to overwrite it", "t.trace",
                text);
  ASSERT_EQ(::link((dir + "/t.trace").c_str(), (dir + "/hard.hbt").c_str()), 0);
  ExpectRefused(dir, "convert t.trace hard.hbt",
                "hbmsim convert: OUT hard.hbt is the input IN t.trace; refusing to overwrite it", "t.trace", text);
  EXPECT_EQ(Names(dir), (std::set<std::string>{"t.trace", "link.trace", "hard.hbt"}));
}

TEST(InputIsOutput, EveryReplayOutputIsChecked) {
  const std::string dir = TestDir();
  const std::string text = CopyExample(dir);
  for (const char* flag : {"--placements", "--json", "--html", "--perfetto", "--memory-viz"}) {
    ExpectRefused(dir, fmt::format("{} {} ./t.trace", kReplay, flag),
                  fmt::format("hbmsim replay: {} ./t.trace is the input TRACE t.trace; refusing to overwrite it",
                              flag),
                  "t.trace", text);
  }
  EXPECT_EQ(Names(dir), std::set<std::string>{"t.trace"});
}

TEST(InputIsOutput, AYamlConfigIsAnInputToo) {
  const std::string dir = TestDir();
  CopyExample(dir);
  const std::string yaml = Slurp(Source("configs/bfc_tensorflow.yaml"));
  Spit(dir + "/bfc.yaml", yaml);
  ExpectRefused(dir, "replay t.trace --allocator bfc.yaml --bytes-limit 256MiB --json bfc.yaml",
                "hbmsim replay: --json bfc.yaml is the input --allocator bfc.yaml; refusing to overwrite it",
                "bfc.yaml", yaml);
}

TEST(InputIsOutput, SizeCompareAdviseAndDiagnoseAreChecked) {
  const std::string dir = TestDir();
  const std::string text = CopyExample(dir);
  ExpectRefused(dir, "size t.trace --allocator bfc --json t.trace",
                "hbmsim size: --json t.trace is the input TRACE t.trace; refusing to overwrite it", "t.trace",
                text);
  ExpectRefused(dir, "compare t.trace --allocators bfc,best_fit --json t.trace",
                "hbmsim compare: --json t.trace is the input TRACE t.trace; refusing to overwrite it", "t.trace",
                text);
  ExpectRefused(dir, "advise t.trace --allocator bfc --json t.trace",
                "hbmsim advise: --json t.trace is the input RECORDING t.trace; refusing to overwrite it", "t.trace",
                text);
  const std::string log = Slurp(Source("tests/data/xla/remat.log"));
  Spit(dir + "/job.log", log);
  ExpectRefused(dir, "diagnose job.log --json job.log",
                "hbmsim diagnose: --json job.log is the input LOG job.log; refusing to overwrite it", "job.log",
                log);
}

TEST(InputIsOutput, StandardInputAndOutputAreCheckedToo) {
  const std::string dir = TestDir();
  const std::string text = CopyExample(dir);
  for (const char* input : {"/dev/stdin", "-"}) {
    SCOPED_TRACE(input);
    const Result r = Hbmsim(dir, fmt::format("convert {} t.trace", input), StdinFrom(dir + "/t.trace"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, fmt::format("hbmsim convert: OUT t.trace is the input IN {}; refusing to overwrite it\n",
                                 input));
    EXPECT_EQ(Slurp(dir + "/t.trace"), text);
  }
  // `hbmsim convert t.trace - >> t.trace` would read its own output.
  const Result r = Hbmsim(dir, "convert t.trace -", StdoutTo(dir + "/t.trace", true));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim convert: OUT - is the input IN t.trace; refusing to overwrite it\n");
  EXPECT_EQ(Slurp(dir + "/t.trace"), text);
  const Result replay = Hbmsim(dir, kReplay, StdoutTo(dir + "/t.trace", true));
  EXPECT_EQ(replay.exit_code, 2);
  EXPECT_EQ(replay.err, "hbmsim replay: standard output is the input TRACE t.trace; refusing to overwrite it\n");
  EXPECT_EQ(Slurp(dir + "/t.trace"), text);
}

TEST(WriteErrors, AReportToAFullStdoutIsExitTwo) {
  const std::string dir = TestDir();
  CopyExample(dir);
  for (const std::string& line : {kReplay, std::string("size t.trace --allocator bfc"),
                                  std::string("compare t.trace --allocators bfc,best_fit"),
                                  std::string("convert t.trace -"), std::string("diagnose ") +
                                  Source("tests/data/xla/remat.log")}) {
    SCOPED_TRACE(line);
    const Result r = Hbmsim(dir, line, StdoutTo("/dev/full"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot write standard output: No space left on device"), std::string::npos) << r.err;
  }
}

TEST(WriteErrors, AFullDiskLeavesNothingAndSaysWhichFile) {
  const std::string dir = TestDir();
  CopyExample(dir);
  Spit(dir + "/report.html", "the good report\n");
  // RLIMIT_FSIZE: every file the child writes stops at 1 KiB (EFBIG), like a disk that is full.
  const ChildOptions full = FileSizeLimit(1024, "/dev/null");
  struct Case {
    std::string line, message;
  };
  const std::vector<Case> cases = {
      {"gen churn --seed 1 --events 2000 -o g.trace", "hbmsim gen: cannot write g.trace: File too large"},
      {"convert t.trace big.trace", ""},
      {kReplay + " --html report.html", "hbmsim replay: --html: cannot write report.html: File too large"},
      {kReplay + " --json r.json --placements p.csv", "hbmsim replay: --json: cannot write r.json: File too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const Result r = Hbmsim(dir, c.line, full);
    if (c.message.empty()) {  // the text fits in 1 KiB: the limit is not reached
      EXPECT_EQ(r.exit_code, 0) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, c.message + "\n");
  }
  EXPECT_EQ(Slurp(dir + "/report.html"), "the good report\n");
  EXPECT_EQ(Names(dir), (std::set<std::string>{"t.trace", "report.html", "big.trace"}));
}

TEST(WriteErrors, APlacementsCsvOnAFullDiskIsExitTwoNotThree) {
  const std::string dir = TestDir();
  const Result gen = Hbmsim(dir, "gen churn --seed 3 --events 20000 -o c.hbt");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Result r = Hbmsim(dir, "replay c.hbt --allocator bfc --bytes-limit 64GiB --placements p.csv",
                       FileSizeLimit(64 << 10));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim replay: --placements: cannot write p.csv: File too large\n");
  EXPECT_EQ(Names(dir), std::set<std::string>{"c.hbt"});
}

TEST(WriteErrors, ABadOutputPathFailsBeforeTheReplay) {
  const std::string dir = TestDir();
  CopyExample(dir);
  const Result r = Hbmsim(dir, kReplay + " --json nodir/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim replay: --json: cannot write nodir/x.json: No such file or directory\n");
  EXPECT_EQ(r.out, "");  // no report: nothing was replayed
}

}  // namespace
}  // namespace hbmsim::testing
