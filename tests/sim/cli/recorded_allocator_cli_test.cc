// Without --allocator, a recording that says which allocator wrote it
// replays, sizes and is advised under that policy (RecordingHooks::
// made_formats): exactly as with the policy named, plus one note saying so.
// A recording that does not say is one error line naming the option.
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

TEST(RecordedAllocatorCliTest, APyTorchSnapshotReplaysUnderTorch) {
  const CliRun chosen = RunHbmsim("replay " + kExpandableOomSnapshot + " --no-advice");
  const CliRun named = RunHbmsim("replay " + kExpandableOomSnapshot + " --no-advice --allocator torch");
  EXPECT_EQ(chosen.exit_code, 1) << chosen.err;
  EXPECT_EQ(named.exit_code, 1) << named.err;
  EXPECT_EQ(chosen.out, named.out);
  EXPECT_NE(chosen.out.find("failed on device 1 with torch under the limit 84298432512 B"), std::string::npos)
      << chosen.out;
  EXPECT_EQ(chosen.err,
            "hbmsim replay: no --allocator: torch, whose runtime writes torch-snapshot recordings (--allocator "
            "picks another)\n");
  EXPECT_EQ(named.err, "");
}

TEST(RecordedAllocatorCliTest, ATensorFlowProfileIsSizedUnderBfcWithItsRecordedOptions) {
  const CliRun chosen = RunHbmsim("size " + kKerasFitProfile);
  const CliRun named = RunHbmsim("size " + kKerasFitProfile + " --allocator bfc");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(chosen.out, named.out);
  // The profile's own settings still apply: TF's GPU allocator collects free regions; its
  // regions come from cudaMalloc, so they never coalesce.
  EXPECT_NE(chosen.out.find("  allocator:        bfc (built-in)\n"
                            "  options:          allow_growth=false garbage_collection=true fragmentation_fraction=0 "
                            "region_coalescing=false first_region=2097152\n"
                            "  settings:         garbage_collection=true (from the recording)\n"),
            std::string::npos)
      << chosen.out;
  EXPECT_NE(chosen.out.find("  min bytes_limit:  61631536 (58.78MiB)\n"), std::string::npos) << chosen.out;
  EXPECT_EQ(chosen.err.rfind("hbmsim size: no --allocator: bfc, whose runtime writes xplane recordings "
                             "(--allocator picks another)\n",
                             0),
            0u)
      << chosen.err;
}

TEST(RecordedAllocatorCliTest, AdviceOnASnapshotWithoutAllocator) {
  const CliRun chosen = RunHbmsim("advise " + kExpandableOomSnapshot);
  const CliRun named = RunHbmsim("advise " + kExpandableOomSnapshot + " --allocator torch");
  EXPECT_EQ(chosen.exit_code, named.exit_code) << chosen.err;
  EXPECT_EQ(chosen.out, named.out);
  EXPECT_NE(chosen.out.find("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128"), std::string::npos) << chosen.out;
}

TEST(RecordedAllocatorCliTest, ATextTraceStillNeedsAnAllocator) {
  const std::string expected =
      ": --allocator: required: configs/examples/fits.trace (text) does not say which allocator ran "
      "the job (built-in: best_fit, bfc, cuda_async, first_fit, ideal, offline, paged, torch, tpu; or a .yaml "
      "config file)\n";
  for (const std::string command : {"replay", "size", "advise"}) {
    const CliRun r = RunHbmsim(command + " configs/examples/fits.trace");
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_EQ(r.err, "hbmsim " + command + expected);
  }
}

// An XLA dump was packed by XLA's buffer assignment, the offline planner
// under XLA's rules (which the dump's settings select): with no --allocator
// it replays and sizes under offline, as with offline named.
TEST(RecordedAllocatorCliTest, AnXlaDumpReplaysUnderXlasOwnPacking) {
  const std::string dump =
      "../shared/xla_dumps/module_0179.jit__kernel.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
  for (const std::string command : {"replay", "size"}) {
    const CliRun chosen = RunHbmsim(command + " " + dump);
    const CliRun named = RunHbmsim(command + " " + dump + " --allocator offline");
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    EXPECT_EQ(chosen.out, named.out);
    EXPECT_EQ(chosen.err.rfind("hbmsim " + command +
                                   ": no --allocator: offline, whose runtime writes xla-text recordings (--allocator "
                                   "picks another)\n",
                               0),
              0u)
        << chosen.err;
  }
  // As docs/formats/xla.md measured it (the dump's own "Total bytes used: 4320464428").
  EXPECT_NE(RunHbmsim("size " + dump).out.find("  min bytes_limit:  4320462900 (4.02GiB)\n"), std::string::npos);
}

// A BFC allocator's log is no trace of requests: said first, with the
// command that reads it, and not as an --allocator or a limit to give (the
// reader refuses a first event line that is no event when it opens the file).
TEST(RecordedAllocatorCliTest, ABfcLogIsNamedBeforeAnyOptionIsAskedFor) {
  const std::string dump = "../shared/bfc_dumps/20.txt";
  const std::string expected =
      ": ../shared/bfc_dumps/20.txt:13: unknown event '2023-10-02': a line of a TensorFlow log, not an event; "
      "`hbmsim diagnose` reads the out-of-memory dump of a BFC allocator's log\n";
  for (const std::string command : {"replay", "size", "advise", "inspect"}) {
    const CliRun r = RunHbmsim(command + " " + dump);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_EQ(r.err, "hbmsim " + command + expected);
  }
  const CliRun limited = RunHbmsim("replay " + dump + " --allocator bfc");
  EXPECT_EQ(limited.err, "hbmsim replay" + expected);
}

}  // namespace
}  // namespace hbmsim::testing
