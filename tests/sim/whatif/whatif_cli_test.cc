// End to end: `hbmsim size` and `hbmsim compare` as a user runs them.
#include <sys/wait.h>

#include <cstdlib>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim {
namespace {

using testing::ReadFile;
using testing::RunHbmsim;
using testing::TempPath;
using testing::WriteFile;

std::string TwoHoles() {
  const std::string path = TempPath("two_holes.trace");
  WriteFile(path,
            "# hbmsim-trace v1\nalloc 1 2048\nalloc 2 1024\nalloc 3 1024\nalloc 4 1024\nfree 1\nfree 3\n"
            "alloc 5 1024\nalloc 6 2048\n");
  return path;
}

TEST(SizeCliTest, PrintsTheMinimumAndWritesTheJsonKeys) {
  const std::string json = TempPath("size.json");
  const testing::CliRun r =
      RunHbmsim("size " + TwoHoles() + " --allocator first_fit --jobs 2 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  min bytes_limit:  7168 (7.0KiB)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  overhead:         0.4000 (40.00% over peak live)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  at the answer:    7168 fits all 8 events (its trial run to the last one)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(testing::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(": 8 events of device 0, peak live 5120 B; every trial replays the events from memory\n"),
            std::string::npos)
      << r.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["min_bytes_limit"], 7168);
  EXPECT_EQ(j["peak_live_bytes"], 5120);
  EXPECT_DOUBLE_EQ(j["overhead"].get<double>(), 0.4);
  EXPECT_EQ(j["resolution"], 256);
  EXPECT_TRUE(j["non_monotonic"].is_null());
  EXPECT_EQ(j["allocator"]["name"], "first_fit");
  EXPECT_EQ(j["allocator"]["options"]["alignment"], 256);
}

TEST(SizeCliTest, OutputIsTheSameForOneJobAndFour) {
  const std::string trace = "configs/examples/fragmentation.trace";
  for (const char* a : {"bfc", "tpu", "paged", "offline"}) {
    const testing::CliRun one = RunHbmsim(fmt::format("size {} --allocator {} --jobs 1", trace, a));
    const testing::CliRun four = RunHbmsim(fmt::format("size {} --allocator {} --jobs 4", trace, a));
    EXPECT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(one.out, four.out) << a;
    EXPECT_EQ(one.err, four.err) << a;
  }
  // bfc's default options keep limit windows, so its trials are shared, and stderr says so.
  const testing::CliRun bfc = RunHbmsim("size " + trace + " --allocator bfc");
  EXPECT_EQ(bfc.err,
            "hbmsim size: configs/examples/fragmentation.trace: 13 events of device 0, peak live 268435456 B; "
            "trials resume from checkpoints of earlier ones\n");
  const std::string args =
      " --allocators bfc,tpu,first_fit,best_fit,paged:page_size=1MiB,ideal,offline "
      "--bytes-limit 256MiB";
  const testing::CliRun one = RunHbmsim("compare " + trace + args + " --jobs 1");
  const testing::CliRun four = RunHbmsim("compare " + trace + args + " --jobs 4");
  EXPECT_EQ(one.exit_code, 1) << one.err;  // some policies fail at 256MiB
  EXPECT_EQ(four.exit_code, 1) << four.err;
  EXPECT_EQ(one.out, four.out);
}

TEST(SizeCliTest, BadArgumentsExitTwoWithOneLine) {
  struct Case {
    std::string args, message;
  };
  const std::string bad = TempPath("bad.trace");
  WriteFile(bad, "# hbmsim-trace v1\nalloc 1 100\nfree 2\n");
  const std::vector<Case> cases = {
      {"size configs/examples/fits.trace --allocator bfcc",
       "hbmsim size: --allocator bfcc: unknown allocator"},
      {"size configs/examples/fits.trace --allocator bfc --resolution 0",
       "hbmsim size: --resolution 0: must be at least 1 byte\n"},
      {"compare configs/examples/fits.trace --allocators bfc --bytes-limit -1",
       "hbmsim compare: --bytes-limit -1: "},
      {"size " + bad + " --allocator bfc", "hbmsim size: " + bad + ":3: "},
      {"compare " + bad + " --allocators bfc,ideal", "hbmsim compare: " + bad + ":3: "},
  };
  for (const Case& c : cases) {
    const testing::CliRun r = RunHbmsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(testing::CountLines(r.err), 1) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << c.args << ": " << r.err;
  }
}

// Without --allocators, compare's rows are the runtimes' allocators hbmsim
// models (PolicySpec::models_a_runtime), the one whose runtime wrote the
// recording first: the same table as naming them, and one note saying so.
TEST(CompareCliTest, WithoutAllocatorsTheRuntimesAllocatorsAreCompared) {
  struct Case {
    std::string trace, named, note;
  };
  const std::vector<Case> cases = {
      {"configs/examples/fits.trace", "bfc,cuda_async,torch,tpu",
       "hbmsim compare: no --allocators: bfc, cuda_async, torch, tpu, the runtimes' allocators hbmsim models "
       "(--allocators picks others)\n"},
      {"../shared/torch_snapshots/cs336_ctx128_fullstep.pickle", "torch,bfc,cuda_async,tpu",
       "hbmsim compare: no --allocators: torch, bfc, cuda_async, tpu, the runtimes' allocators hbmsim models, "
       "torch first: its runtime writes torch-snapshot recordings (--allocators picks others)\n"},
  };
  for (const Case& c : cases) {
    const testing::CliRun chosen = RunHbmsim("compare " + c.trace + " --jobs 2");
    const testing::CliRun named = RunHbmsim("compare " + c.trace + " --jobs 2 --allocators " + c.named);
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    EXPECT_EQ(chosen.out, named.out);
    EXPECT_EQ(chosen.err.rfind(c.note, 0), 0u) << chosen.err;
    EXPECT_EQ(named.err.find("no --allocators"), std::string::npos) << named.err;
  }
}

// offline plans from the scenario's own events: no second path to give.
TEST(ReplayCliTest, OfflineReplaysItsPlanFromTheSameRecording) {
  const std::string trace = "configs/examples/fragmentation.trace";
  // The 96 MiB request that fragments bfc fits: the plan left room for it.
  const testing::CliRun r = RunHbmsim("replay " + trace + " --allocator offline --bytes-limit 256MiB --paranoid");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  outcome:    0 of 6 allocations failed (0 oom, 0 fragmentation)\n"),
            std::string::npos)
      << r.out;
  const testing::CliRun old = RunHbmsim("replay " + trace + " --allocator offline --set trace=" + trace +
                                        " --bytes-limit 256MiB");
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_EQ(old.err.rfind("hbmsim replay: --set trace=" + trace + ": unknown option", 0), 0u) << old.err;
}

// Variants of one policy read apart, bytes come with units, every column is
// explained, and a policy failing at L makes the exit code 1.
TEST(CompareCliTest, RowsAreLabelledBySettingsWithUnitsALegendAndExitOneOnFailure) {
  const std::string json = TempPath("compare.json");
  const testing::CliRun r =
      RunHbmsim("compare configs/examples/fragmentation.trace --allocators bfc,torch,torch:expandable_segments=true "
                "--bytes-limit 256MiB --jobs 2 --json " + json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "hbmsim compare: configs/examples/fragmentation.trace: 13 events of device 0, peak live 268435456 B\n");
  EXPECT_NE(r.out.find("\ntorch                             268435456 (256.00MiB)    0.0000         0      0      0  "
                       "268435456 (256.00MiB)  268435456 (256.00MiB)         -         -    1.0000                 "
                       "0 (0B)    0.0000\n"
                       "torch:expandable_segments=true    272629760 (260.00MiB)    0.0156         2      0      2  "
                       "201326592 (192.00MiB)  209715200 (200.00MiB)    0.2500    0.2500    0.9600      4194304 "
                       "(4.00MiB)   -0.2188\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nFails at L = 268435456 (256.00MiB): bfc, torch:expandable_segments=true (exit 1)\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("  heap-lb     min_limit - peak live bytes: the bytes this policy needs beyond the lower "
                       "bound\n"),
            std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["rows"][2]["label"], "torch:expandable_segments=true");
  EXPECT_EQ(j["rows"][1]["label"], "torch");
  const testing::CliRun fits =
      RunHbmsim("compare configs/examples/fragmentation.trace --allocators torch --bytes-limit 256MiB --jobs 1");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(fits.out.find("Fails at L"), std::string::npos);
}

// Without --bytes-limit, compare's L is the limit the job ran under where the
// recording states it (as advise and replay take it), said with its source;
// --bytes-limit overrides it; a recording that states none has no L.
TEST(CompareCliTest, WithoutBytesLimitLIsTheLimitTheRecordingStates) {
  const std::string events = "alloc 1 2048\nalloc 2 1024\nalloc 3 1024\nalloc 4 1024\nfree 1\nfree 3\n";
  const std::string stated = TempPath("stated_limit.trace");
  WriteFile(stated, "# hbmsim-trace v1\n# device_bytes: 4096\n" + events);
  const std::string json = TempPath("stated_limit.json");
  const testing::CliRun r = RunHbmsim("compare " + stated + " --allocators ideal --jobs 1 --json " + json);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\n  limit L:         4096 (4.0KiB) from the trace's # device_bytes\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nFails at L = 4096 (4.0KiB): ideal (exit 1)\n"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["bytes_limit"], 4096);
  EXPECT_EQ(j["bytes_limit_source"], "the trace's # device_bytes");
  EXPECT_EQ(j["rows"][0]["at_limit"]["oom"], 1);

  const testing::CliRun given = RunHbmsim("compare " + stated + " --allocators ideal --jobs 1 --bytes-limit 8KiB");
  EXPECT_EQ(given.exit_code, 0) << given.err;
  EXPECT_NE(given.out.find("\n  limit L:         8192 (8.0KiB) from --bytes-limit\n"), std::string::npos)
      << given.out;

  const std::string unstated = TempPath("unstated_limit.trace");
  WriteFile(unstated, "# hbmsim-trace v1\n" + events);
  const testing::CliRun none = RunHbmsim("compare " + unstated + " --allocators ideal --jobs 1 --json " + json);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("\n  limit L:         - (no --bytes-limit, and the recording states none)\n"),
            std::string::npos)
      << none.out;
  const nlohmann::json k = nlohmann::json::parse(ReadFile(json));
  EXPECT_TRUE(k["bytes_limit"].is_null());
  EXPECT_TRUE(k["bytes_limit_source"].is_null());
}

// Each advised setting's minimum limit is what `size` finds with it, and the
// lines are ranked: fitting at L first, then the smallest minimum.
TEST(AdviseCliTest, EachLinesMinimumLimitIsSizeWithThatSetting) {
  const std::string trace = "configs/examples/fragmentation.trace";
  const testing::CliRun r = RunHbmsim("advise " + trace + " " +
                                      "--allocator configs/bfc_tensorflow.yaml --bytes-limit 256MiB --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  today's minimum: 301989888 (288.00MiB); at L: no (1 fail)\n\n"
                       "fits at L                     min limit           vs today  setting\n"
                       "yes               268435456 (256.00MiB)     saves 32.00MiB  TF_GPU_ALLOCATOR=cuda_malloc_async\n"
                       "no (1 fail)       301989888 (288.00MiB)               same  TF_FORCE_GPU_ALLOW_GROWTH=true "
                       "(JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false)\n"),
            std::string::npos)
      << r.out;
  const auto min_limit = [&](const std::string& args) {
    const std::string json = TempPath("advise_size.json");
    const testing::CliRun s = RunHbmsim("size " + trace + " " + args + " --jobs 2 --json " + json);
    EXPECT_EQ(s.exit_code, 0) << s.err;
    return nlohmann::json::parse(ReadFile(json))["min_bytes_limit"].get<uint64_t>();
  };
  EXPECT_EQ(min_limit("--allocator cuda_async"), 268435456u);
  // TF's regions never merge (the config's region_coalescing=false), so growing
  // the pool by doubling regions ends where the one preallocated region does.
  EXPECT_EQ(min_limit("--allocator configs/bfc_tensorflow.yaml --set allow_growth=true"), 301989888u);
  // With regions that merge (a virtual-memory sub-allocator), growth costs 64 MiB more.
  EXPECT_EQ(min_limit("--allocator configs/bfc_tensorflow.yaml --set allow_growth=true --set region_coalescing=true"),
            369098752u);
  EXPECT_EQ(min_limit("--allocator configs/bfc_tensorflow.yaml"), 301989888u);

  const std::string json = TempPath("advise.json");
  const testing::CliRun t =
      RunHbmsim("advise " + trace + " --allocator torch --bytes-limit 256MiB --jobs 2 --json " + json);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(j["candidates"].size(), 6u);
  EXPECT_EQ(j["candidates"][5]["how"], "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  EXPECT_EQ(j["candidates"][5]["min_bytes_limit"], min_limit("--allocator torch --set expandable_segments=true"));
  EXPECT_EQ(j["candidates"][0]["how"], "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128");
  EXPECT_EQ(j["candidates"][0]["min_bytes_limit"], min_limit("--allocator torch --set max_split_size=128MiB"));
}

// The H100 job's peak live bytes exceed its device: advice says no setting fits.
TEST(AdviseCliTest, ATrueOomSaysNoSettingCanFit) {
  const testing::CliRun r = RunHbmsim("advise ../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle "
                                      "--allocator torch --device 1 --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  today's minimum: 89508544724 (83.36GiB); at L: no (1 fail)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no (2 fail)      94826922196 (88.31GiB)      costs 4.95GiB  "
                       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("\nNo setting can fit at L: the peak live bytes exceed it by 5073613780 (4.72GiB); the job "
                       "itself must hold less at its peak.\n"),
            std::string::npos)
      << r.out;
}

TEST(CompareCliTest, BaselineVersusCandidateShowsEachDelta) {
  const std::string base = TempPath("base.trace");
  const std::string cand = TempPath("cand.trace");
  WriteFile(base, "# hbmsim-trace v1\nalloc 1 1024\nalloc 2 1024\nfree 1\nalloc 3 2048\n");
  WriteFile(cand, "# hbmsim-trace v1\nalloc 1 1024\nalloc 3 2048\nalloc 2 1024\nfree 1\n");
  const testing::CliRun r = RunHbmsim("compare --baseline " + base + " --candidate " + cand +
                                      " --allocator best_fit --bytes-limit 4096");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Baseline: peak live 3K, best_fit needs 4K (2K goes above b). Candidate:
  // all three live at once, 4K, and it packs them exactly.
  EXPECT_NE(r.out.find("peak_live_bytes                  3072             4096            +1024   +33.33%"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("min_bytes_limit                  4096             4096               +0    +0.00%"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("failures_at_limit                   0                0               +0         -"),
            std::string::npos)
      << r.out;
}

// The candidate frees act.1 later, so its peak holds act.1 as well: the
// per-group table names the 1 KiB it costs, and the op table adds act.1 and
// act.2 up as "act".
TEST(CompareCliTest, BaselineVersusCandidateShowsTheChangePerGroupAtThePeak) {
  const std::string base = TempPath("group_base.trace");
  const std::string cand = TempPath("group_cand.trace");
  WriteFile(base, "# hbmsim-trace v1\nalloc 1 1024 tag=weights\nalloc 2 1024 tag=act.1\nalloc 4 512 tag=act.2\n"
                  "free 2\nalloc 3 2048 tag=grad\n");
  WriteFile(cand, "# hbmsim-trace v1\nalloc 1 1024 tag=weights\nalloc 3 2048 tag=grad\nalloc 2 1024 tag=act.1\n"
                  "alloc 4 512 tag=act.2\nfree 1\n");
  const std::string json = TempPath("group_delta.json");
  const testing::CliRun r = RunHbmsim("compare --baseline " + base + " --candidate " + cand +
                                      " --allocator best_fit --bytes-limit 8192 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nWhere the memory went at each peak of live bytes (baseline event 4, candidate event 3):\n"
                       "  by tag\n"
                       "                    baseline                candidate                     change  group\n"
                       "                 0        0B           1024    1.0KiB            +1024 (+1.0KiB)  act.1\n"
                       "               512      512B            512      512B                   +0 (+0B)  act.2\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  by op\n"
                       "                    baseline                candidate                     change  group\n"
                       "               512      512B           1536    1.5KiB            +1024 (+1.0KiB)  act\n"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(json))["memory_at_peak"];
  EXPECT_EQ(j["by_op"][0], nlohmann::json::parse(R"({"key":"act","baseline":512,"candidate":1536,"delta":1024})"));
  EXPECT_EQ(j["by_tag"].size(), 4u);
  EXPECT_TRUE(j["by_frame"].empty());
}

// `hbmsim ARGS` on a pseudo-terminal (script(1) gives it one on stdin,
// stdout and stderr), its progress shown from the start: its exit code, and
// all the terminal was sent.
struct TerminalRun {
  int exit_code = -1;
  std::string tty;
};
TerminalRun OnATerminal(const std::string& args, const std::string& log_name) {
  const std::string log = TempPath(log_name);
  const std::string cmd = std::string("script -qec 'HBMSIM_PROGRESS_AFTER=0 ") + HBMSIM_BINARY + " " + args + "' " +
                          log + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(log)};
}
bool HasScript() { return std::system("command -v script >/dev/null 2>&1") == 0; }

// On a terminal a search shows its bounds on stderr as it goes
// (sim/cli/size_progress.h), erased before the report; elsewhere stderr has
// only the one-line note (the tests above). HBMSIM_PROGRESS_AFTER=0 shows the
// line from the first verdict, however fast the build, so a small trace does.
TEST(SizeCliTest, ATerminalSeesTheSearchProgress) {
  if (!HasScript()) GTEST_SKIP() << "script (util-linux) missing";
  const std::string trace = TempPath("churn200k.hbt");
  ASSERT_EQ(RunHbmsim("gen churn --seed 7 --events 200000 -o " + trace).exit_code, 0);
  const TerminalRun r = OnATerminal("size " + trace + " --allocator bfc --jobs 1", "size_tty.log");
  ASSERT_EQ(r.exit_code, 0);
  // The survey's events, then the first verdict (later ones come at most
  // twice a second, so a quick search shows only that one).
  const size_t survey = r.tty.find("\rhbmsim: 4096 events, ");
  ASSERT_NE(survey, std::string::npos) << r.tty.substr(0, 600);
  EXPECT_NE(r.tty.find("\r\x1b[K\rhbmsim size: 1 limit tried; fails at 634785114 B\x1b[K", survey), std::string::npos)
      << r.tty.substr(0, 600);
  // Erased, then the report.
  EXPECT_NE(r.tty.find("\r\x1b[Khbmsim size\r\n  trace:"), std::string::npos) << r.tty.substr(0, 600);
}

// After a failed replay, working out what would fit takes several searches;
// on a terminal they show as they go, and the line is erased before the
// report.
TEST(SizeCliTest, ATerminalSeesTheAdviceAfterAFailedReplayProgress) {
  if (!HasScript()) GTEST_SKIP() << "script (util-linux) missing";
  const std::string trace = TempPath("churn100k.hbt");
  ASSERT_EQ(RunHbmsim("gen churn --seed 7 --events 100000 -o " + trace).exit_code, 0);
  const TerminalRun r =
      OnATerminal("replay " + trace + " --allocator bfc --bytes-limit 60MiB --jobs 1", "replay_tty.log");
  ASSERT_EQ(r.exit_code, 1);  // an allocation failed
  const size_t line = r.tty.find("\rhbmsim replay: what would fit, ");
  ASSERT_NE(line, std::string::npos) << r.tty.substr(0, 600);
  EXPECT_NE(r.tty.find(" of 4 (", line), std::string::npos) << r.tty.substr(0, 600);
  EXPECT_NE(r.tty.find("\r\x1b[KVerdict: ", line), std::string::npos) << r.tty.substr(0, 600);
}

}  // namespace
}  // namespace hbmsim
