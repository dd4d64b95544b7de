// Determinism, end to end: the same inputs give byte-identical outputs. Each
// replay runs twice and every output (text report, --json, --placements,
// --html, --perfetto) must match byte for byte; `size` and `compare` run with
// --jobs 1, 2 and 4 and must print and write the same bytes each time.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/hardening/child_process.h"

namespace hbmsim::testing {
namespace {

const std::string kSnapshot =
    std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/small_trace_from_empty.pickle";

// Everything one run printed or wrote.
struct Outputs {
  int exit_code = -1;
  std::string out, err;
  std::vector<std::string> files;
};

Outputs Run(const std::string& args, const std::vector<std::string>& files) {
  for (const std::string& f : files) std::remove(f.c_str());
  const BoundedRun r = RunBounded(args);
  Outputs o{r.exit_code, r.out, r.err, {}};
  for (const std::string& f : files) o.files.push_back(ReadFile(f));
  return o;
}

void ExpectSame(const Outputs& a, const Outputs& b, const std::string& what) {
  EXPECT_EQ(a.exit_code, b.exit_code) << what;
  EXPECT_EQ(a.out, b.out) << what;
  EXPECT_EQ(a.err, b.err) << what;
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) EXPECT_TRUE(a.files[i] == b.files[i]) << what << " file " << i;
}

// Replays `input` twice with every output; returns the first run's outputs.
Outputs ReplayTwice(const std::string& input, const std::string& options) {
  const std::vector<std::string> files = {ScratchPath("r.json"), ScratchPath("r.csv"), ScratchPath("r.html"),
                                          ScratchPath("r.perfetto.json")};
  const std::string args = fmt::format("replay {} {} --json {} --placements {} --html {} --perfetto {}",
                                       input, options, files[0], files[1], files[2], files[3]);
  const Outputs first = Run(args, files);
  ExpectSame(first, Run(args, files), args);
  return first;
}

// Checks that the outputs are real reports, so "identical" is not "both empty".
void ExpectReport(const Outputs& o, int exit_code, const std::string& outcome) {
  EXPECT_EQ(o.exit_code, exit_code) << o.err;
  EXPECT_NE(o.out.find(outcome), std::string::npos) << o.out;
  EXPECT_EQ(o.files[0].front(), '{');
  EXPECT_TRUE(o.files[1].starts_with("event,id,requested,status,offset,size\n"));
  EXPECT_TRUE(o.files[2].starts_with("<!DOCTYPE html>"));
  EXPECT_FALSE(o.files[3].empty());
}

TEST(DeterminismTest, ReplayOfTheFragmentationExample) {
  ExpectReport(ReplayTwice("configs/examples/fragmentation.trace",
                           "--allocator configs/bfc_tensorflow.yaml --bytes-limit 256MiB"),
               1, "outcome:    1 of 6 allocations failed (0 oom, 1 fragmentation)");
}

TEST(DeterminismTest, ReplayOfTheExamplesUnderTpuAndTorch) {
  ExpectReport(ReplayTwice("configs/examples/fits.trace", "--allocator tpu"), 0, "outcome:    0 of 5 allocations failed (0 oom, 0 fragmentation)");
  ExpectReport(ReplayTwice("configs/examples/oom.trace", "--allocator torch"), 1, "(1 oom, 0 fragmentation)");
}

TEST(DeterminismTest, ReplayOfATorchSnapshot) {
  ExpectReport(ReplayTwice(kSnapshot, "--allocator torch"), 0, "outcome:    0 of 36 allocations failed");
}

TEST(DeterminismTest, ReplayOfAChurnTraceWithManyFailures) {
  const std::string trace = ScratchPath("churn.trace");
  ASSERT_EQ(RunBounded(fmt::format("gen churn --seed 11 --events 20000 -o {}", trace)).exit_code, 0);
  for (const std::string policy : {"bfc", "best_fit", "paged", "torch", "tpu"}) {
    const Outputs o = ReplayTwice(trace, "--allocator " + policy + " --bytes-limit 48MiB");
    EXPECT_EQ(o.exit_code, 1) << policy << ": " << o.err;
  }
}

// `size` and `compare` search limits on a thread pool: --jobs must not show.
void ExpectSameForEveryJobCount(const std::string& args) {
  const std::vector<std::string> files = {ScratchPath("w.json")};
  const Outputs one = Run(args + " --jobs 1 --json " + files[0], files);
  EXPECT_NE(one.exit_code, 2) << one.err;
  EXPECT_EQ(one.files[0].front(), '{');
  for (const int jobs : {2, 4, 1}) {
    ExpectSame(one, Run(fmt::format("{} --jobs {} --json {}", args, jobs, files[0]), files),
               fmt::format("{} --jobs {}", args, jobs));
  }
}

TEST(DeterminismTest, SizeAcrossJobCounts) {
  ExpectSameForEveryJobCount("size configs/examples/fragmentation.trace --allocator bfc");
  ExpectSameForEveryJobCount("size " + kSnapshot + " --allocator torch");
}

TEST(DeterminismTest, CompareAcrossJobCounts) {
  ExpectSameForEveryJobCount(
      "compare configs/examples/fragmentation.trace --allocators "
      "bfc,tpu,torch,best_fit,first_fit,paged,ideal,"
      "offline --bytes-limit 256MiB");
  ExpectSameForEveryJobCount("compare " + kSnapshot +
                             " --allocators bfc,torch,best_fit,ideal --bytes-limit 4GiB");
}

}  // namespace
}  // namespace hbmsim::testing
