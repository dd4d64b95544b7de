// Issue 18, item 2 through the real binary: an output appears complete at its
// path or not at all. The child is signalled while it is writing (once its
// temporary has bytes in it: polled, never timed); SIGINT, SIGTERM and SIGHUP leave
// nothing, SIGKILL (no handler can run) only the temporary; in every case the
// final path holds nothing, or what it held before.
#include <signal.h>
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

// The size of the first hidden temporary in `dir` whose name starts with `prefix`, or 0.
uint64_t TemporaryBytes(const std::string& dir, const std::string& prefix) {
  for (const std::string& name : Names(dir)) {
    if (!name.starts_with(prefix)) continue;
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) == 0) return static_cast<uint64_t>(st.st_size);
  }
  return 0;
}

// Waits until the temporary has at least `bytes` (or the child ended: then the test fails below).
void AwaitTemporary(const std::string& dir, const std::string& prefix, uint64_t bytes, const Child& child) {
  for (int i = 0; i < 200000 && TemporaryBytes(dir, prefix) < bytes; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

class Signals : public ::testing::TestWithParam<int> {};

std::string Big(const std::string& dir) {
  // Large enough that writing its text takes many 64 KiB writes.
  const Result gen = Hbmsim(dir, "gen churn --seed 7 --events 1500000 -o big.hbt");
  EXPECT_EQ(gen.exit_code, 0) << gen.err;
  return "big.hbt";
}

TEST_P(Signals, AKilledConvertLeavesNoPartialOutput) {
  const int sig = GetParam();
  const std::string dir = TestDir();
  const std::string in = Big(dir);
  Spit(dir + "/out.trace", "what was here before\n");
  Child child({"convert", in, "out.trace"}, dir);
  AwaitTemporary(dir, ".out.trace.hbmsim-", 1 << 20, child);
  ASSERT_GE(TemporaryBytes(dir, ".out.trace.hbmsim-"), uint64_t{1} << 20) << "convert ended too soon";
  child.Signal(sig);
  const Result r = child.Wait();
  EXPECT_EQ(r.exit_code, 128 + sig);
  EXPECT_EQ(Slurp(dir + "/out.trace"), "what was here before\n");
  const std::set<std::string> names = Names(dir);
  if (sig == SIGKILL) {
    EXPECT_EQ(names.size(), 3u);  // big.hbt, out.trace and the temporary nobody could remove
  } else {
    EXPECT_EQ(names, (std::set<std::string>{"big.hbt", "out.trace"}));
  }
}

TEST_P(Signals, AKilledReplayLeavesNoCutCsv) {
  const int sig = GetParam();
  const std::string dir = TestDir();
  const std::string in = Big(dir);
  Child child({"replay", in, "--allocator", "bfc", "--bytes-limit", "64GiB", "--placements", "p.csv", "--json",
               "r.json"},
              dir);
  AwaitTemporary(dir, ".p.csv.hbmsim-", 1 << 20, child);
  ASSERT_GE(TemporaryBytes(dir, ".p.csv.hbmsim-"), uint64_t{1} << 20) << "replay ended too soon";
  child.Signal(sig);
  const Result r = child.Wait();
  EXPECT_EQ(r.exit_code, 128 + sig);
  const std::set<std::string> names = Names(dir);
  EXPECT_EQ(names.count("p.csv"), 0u);
  EXPECT_EQ(names.count("r.json"), 0u);
  if (sig != SIGKILL) {
    EXPECT_EQ(names, std::set<std::string>{"big.hbt"});
  }
}

INSTANTIATE_TEST_SUITE_P(Atomic, Signals, ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& p) { return std::string(sigabbrev_np(p.param)); });

TEST(Atomic, AConvertThatFailsOnTheLastLineLeavesNothing) {
  const std::string dir = TestDir();
  std::string text = "# hbmsim-trace v1\n";
  for (int i = 1; i <= 20000; ++i) text += fmt::format("alloc {} 4096\nfree {}\n", i, i);
  text += "free 999999\n";  // not live: the last line is bad
  Spit(dir + "/t.trace", text);
  const Result r = Hbmsim(dir, "convert t.trace out.hbt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hbmsim convert: t.trace:40002: free of id 999999 that is not live\n");
  EXPECT_EQ(Names(dir), std::set<std::string>{"t.trace"});
}

}  // namespace
}  // namespace hbmsim::testing
