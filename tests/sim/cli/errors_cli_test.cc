// Bad input never crashes hbmsim: it exits 2 with exactly one stderr line that
// names the file:line or the option.
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

constexpr char kTrace[] = "replay configs/examples/fits.trace ";

void ExpectBadInput(const CliRun& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(ErrorsCliTest, MalformedTraceNamesFileAndLine) {
  const std::string trace = TempPath("bad.trace");
  WriteFile(trace, "# hbmsim-trace v1\nalloc 1 100\nalloc 2 -5\n");
  CliRun r = RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 1MiB");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("hbmsim replay: " + trace + ":3: ", 0), 0u) << r.err;
}

TEST(ErrorsCliTest, FreeOfAnIdThatIsNotLive) {
  const std::string trace = TempPath("notlive.trace");
  WriteFile(trace, "alloc 1 100\nfree 2\n");
  ExpectBadInput(RunHbmsim("replay " + trace + " --allocator bfc --bytes-limit 1MiB"),
                 "hbmsim replay: " + trace + ":2: free of id 2 that is not live");
}

TEST(ErrorsCliTest, MissingTraceFile) {
  ExpectBadInput(RunHbmsim("replay configs/examples/nope.trace --allocator bfc --bytes-limit 1MiB"),
                 "hbmsim replay: cannot read configs/examples/nope.trace: No such file or directory");
}

TEST(ErrorsCliTest, UnknownAllocator) {
  CliRun r = RunHbmsim(std::string(kTrace) + "--allocator bfcc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1);
  EXPECT_EQ(r.err.rfind("hbmsim replay: --allocator bfcc: unknown allocator (built-in: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("bfc, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; or a .yaml config file)\n"), std::string::npos) << r.err;
}

TEST(ErrorsCliTest, UnknownSetKeyAndBadSetValue) {
  ExpectBadInput(RunHbmsim(std::string(kTrace) + "--allocator bfc --set allow_grwth=true"),
                 "hbmsim replay: --set allow_grwth=true: unknown option for bfc (known: allow_growth, "
                 "garbage_collection, fragmentation_fraction, region_coalescing, first_region)");
  ExpectBadInput(RunHbmsim(std::string(kTrace) + "--allocator bfc --set allow_growth=maybe"),
                 "hbmsim replay: --set allow_growth=maybe: expected true or false");
  ExpectBadInput(RunHbmsim(std::string(kTrace) + "--allocator bfc --set fragmentation_fraction=1.5"),
                 "hbmsim replay: --set fragmentation_fraction=1.5: must be >= 0 and < 1");
}

TEST(ErrorsCliTest, BadBytesLimit) {
  CliRun r = RunHbmsim(std::string(kTrace) + "--allocator bfc --bytes-limit 16GB2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1);
  EXPECT_EQ(r.err.rfind("hbmsim replay: --bytes-limit 16GB2: ", 0), 0u) << r.err;
}

TEST(ErrorsCliTest, NoLimitAnywhere) {
  const std::string trace = TempPath("nolimit.trace");
  WriteFile(trace, "alloc 1 100\n");
  ExpectBadInput(
      RunHbmsim("replay " + trace + " --allocator bfc"),
      "hbmsim replay: no memory limit: pass --bytes-limit, set bytes_limit in the allocator config, or "
      "record `# device_bytes: N` in " +
          trace);
}

TEST(ErrorsCliTest, UnknownYamlKeyNamesFileLineAndPath) {
  const std::string yaml = TempPath("typo.yaml");
  WriteFile(yaml, "allocator:\n  impl: bfc\n  allow_growth: false\n  allow_grwth: true\n");
  ExpectBadInput(
      RunHbmsim(std::string(kTrace) + "--allocator " + yaml),
      "hbmsim replay: " + yaml +
          ":4: allocator.allow_grwth: unknown option for bfc (known: allow_growth, garbage_collection, "
          "fragmentation_fraction, region_coalescing, first_region)");
}

TEST(ErrorsCliTest, ABinaryFileAsConfigIsOneLineOfPrintableText) {
  const std::string yaml = TempPath("binary.yaml");
  WriteFile(yaml, "allocator: \"\\\x01\"\n");  // a quoted scalar with the escape backslash + 0x01
  CliRun r = RunHbmsim(std::string(kTrace) + "--allocator " + yaml);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  for (char c : r.err.substr(0, r.err.size() - 1)) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << r.err;
  EXPECT_EQ(r.err, "hbmsim replay: " + yaml + ":1: malformed YAML: unknown escape character: \\x01\n");
}

TEST(ErrorsCliTest, CommandLineErrorsAreOneLine) {
  ExpectBadInput(RunHbmsim(std::string(kTrace) + "--allocator bfc --on-oom maybe"),
                 "hbmsim replay: --on-oom: maybe not in {continue,stop} (see hbmsim replay --help)");
  ExpectBadInput(
      RunHbmsim(std::string(kTrace) + "--allocator bfc --frobnicate"),
      "hbmsim replay: The following argument was not expected: --frobnicate (see hbmsim replay --help)");
  ExpectBadInput(RunHbmsim("replay configs/examples/fits.trace"),
                 "hbmsim replay: --allocator: required: configs/examples/fits.trace (text) does not say "
                 "which allocator ran the job (built-in: best_fit, bfc, cuda_async, first_fit, ideal, offline, "
                 "paged, torch, tpu; or a .yaml config file)");
  ExpectBadInput(RunHbmsim(""), "hbmsim: A subcommand is required (see hbmsim --help)");
  ExpectBadInput(RunHbmsim("frobnicate"),
                 "hbmsim: unknown command 'frobnicate' (commands: advise, compare, completion, convert, diagnose, "
                 "gen, help, inspect, presets, replay, scale, size, sweep; see hbmsim --help)");
}

TEST(ErrorsCliTest, HelpExitsZero) {
  CliRun top = RunHbmsim("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("  replay "), std::string::npos);
  CliRun replay = RunHbmsim("replay --help");
  EXPECT_EQ(replay.exit_code, 0);
  EXPECT_NE(replay.out.find("--on-oom"), std::string::npos);
  EXPECT_NE(replay.out.find("--check-recorded"), std::string::npos);
}

}  // namespace
}  // namespace hbmsim::testing
