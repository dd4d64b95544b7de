// Issue 18, item 7 (and the small items of 9) through the real binary: the
// contract's exit codes, with exactly one stderr line on exit 2.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

void ExpectBadInput(const std::string& dir, const std::string& line, const std::string& message) {
  SCOPED_TRACE(line);
  const Result r = Hbmsim(dir, line);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, message + "\n");
}

TEST(ExitCodes, ADirectoryIsBadInputForEveryCommand) {
  const std::string dir = TestDir();
  std::filesystem::create_directories(dir + "/d");
  ExpectBadInput(dir, "replay d --allocator bfc --bytes-limit 1GiB", "hbmsim replay: d is a directory");
  ExpectBadInput(dir, "convert d out.trace", "hbmsim convert: d is a directory");
  ExpectBadInput(dir, "diagnose d", "hbmsim diagnose: d is a directory");
  ExpectBadInput(dir, "size d --allocator bfc", "hbmsim size: d is a directory");
  ExpectBadInput(dir, "compare d --allocators bfc,best_fit", "hbmsim compare: d is a directory");
  ExpectBadInput(dir, "replay missing.trace --allocator bfc --bytes-limit 1GiB",
                 "hbmsim replay: cannot read missing.trace: No such file or directory");
  EXPECT_EQ(Names(dir), std::set<std::string>{"d"});
}

TEST(ExitCodes, AnEmptyInputIsNotAJobThatFits) {
  const std::string dir = TestDir();
  Spit(dir + "/empty.trace", "");
  Spit(dir + "/header.trace", "# hbmsim-trace v1\n# device_bytes: 1GiB\n");
  ExpectBadInput(dir, "replay empty.trace --allocator bfc --bytes-limit 1GiB", "hbmsim replay: no events in empty.trace");
  ExpectBadInput(dir, "replay header.trace --allocator bfc", "hbmsim replay: no events in header.trace");
  ExpectBadInput(dir, "size empty.trace --allocator bfc", "hbmsim size: no events in empty.trace");
  ExpectBadInput(dir, "compare empty.trace --allocators bfc,best_fit", "hbmsim compare: no events in empty.trace");
  const Result piped = Shell(dir, "cat empty.trace | $HBMSIM replay - --allocator bfc --bytes-limit 1GiB");
  EXPECT_EQ(piped.exit_code, 2);
  EXPECT_EQ(piped.err, "hbmsim replay: no events in -\n");
}

TEST(ExitCodes, ADeviceWithoutEventsListsTheDevicesThatHaveSome) {
  const std::string dir = TestDir();
  Spit(dir + "/t.trace", "alloc 1 100 device=0\nalloc 2 100 device=3\nfree 1 device=0\nfree 2 device=3\n");
  ExpectBadInput(dir, "replay t.trace --allocator bfc --bytes-limit 1GiB --device 1 --json r.json",
                 "hbmsim replay: --device 1: no event of t.trace is on device 1; devices with events: 0, 3");
  EXPECT_EQ(Names(dir), std::set<std::string>{"t.trace"});
  const Result ok = Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 1GiB --device 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(ExitCodes, CompareIsExitOneWhenARowFails) {
  const std::string dir = TestDir();
  const std::string frag = Source("configs/examples/fragmentation.trace");
  const Result failing = Hbmsim(dir, fmt::format("compare {} --allocators bfc,ideal --bytes-limit 256MiB", frag));
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  const Result fitting = Hbmsim(dir, fmt::format("compare {} --allocators bfc,ideal --bytes-limit 1GiB", frag));
  EXPECT_EQ(fitting.exit_code, 0) << fitting.err;
}

TEST(ExitCodes, SizeAndCompareSayOneLineOnExitTwo) {
  const std::string dir = TestDir();
  Spit(dir + "/bad.trace", "alloc 1 100\nfree 2\n");
  for (const char* line : {"size bad.trace --allocator bfc", "compare bad.trace --allocators bfc,best_fit"}) {
    SCOPED_TRACE(line);
    const Result r = Hbmsim(dir, line);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
}

TEST(Smaller, GenRefusesANegativeSeed) {
  const std::string dir = TestDir();
  const Result r = Hbmsim(dir, "gen churn --seed -1 -o g.trace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--seed"), std::string::npos) << r.err;
  EXPECT_EQ(Names(dir), std::set<std::string>{});
}

}  // namespace
}  // namespace hbmsim::testing
