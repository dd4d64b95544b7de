// End to end: the hbmsim binary's `diagnose` subcommand on real dumps.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

#ifdef HBMSIM_BINARY

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

CliRun Hbmsim(const std::string& args) {
  CliRun run;
  FILE* pipe = popen((std::string(HBMSIM_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

const std::string kDumps = std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/";

TEST(DiagnoseCliTest, Dump20TextAndJson) {
  const std::string json_path = testing::TempDir() + "/diagnose20.json";
  const CliRun run = Hbmsim("diagnose " + kDumps + "20.txt --json " + json_path);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("  verdict      fragmentation: rounded request 614400000 <= free 2913752064 + "
                         "unallocated 0, but the largest free chunk is 558759936\n"),
            std::string::npos)
      << run.out;
  std::ifstream in(json_path);
  std::stringstream contents;
  contents << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(contents.str());
  EXPECT_EQ(j["dumps"][0]["verdict"], "fragmentation");
  EXPECT_EQ(j["dumps"][0]["largest_free_chunk"], 558759936u);
}

TEST(DiagnoseCliTest, EveryRealDumpParses) {
  for (const char* name :
       {"01", "03", "04", "05", "06", "07", "08", "09", "11", "12", "13", "15", "20", "21"}) {
    EXPECT_EQ(Hbmsim("diagnose " + kDumps + name + ".txt").exit_code, 0) << name;
  }
}

TEST(DiagnoseCliTest, BadInputExitsTwoWithOneLine) {
  const CliRun none = Hbmsim("diagnose " + kDumps + "README.md");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "hbmsim diagnose: " + kDumps +
                          "README.md: no BFC allocator dump found (28 lines, 23 not part of a dump)\n");
  const CliRun missing = Hbmsim("diagnose /nonexistent/train.log");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, "hbmsim diagnose: cannot read /nonexistent/train.log: No such file or directory\n");
}

// A recording another command reads, given to diagnose by mistake: the error says which.
TEST(DiagnoseCliTest, ARecordingWithoutADumpNamesTheCommandThatReadsIt) {
  const std::string snapshot = std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/state_only_tiny.pickle";
  const CliRun torch = Hbmsim("diagnose " + snapshot);
  EXPECT_EQ(torch.exit_code, 2);
  EXPECT_EQ(torch.out, "hbmsim diagnose: " + snapshot + ": no BFC allocator dump found (4 lines, 4 not part of a "
                       "dump); it is a recording (torch-snapshot): `hbmsim replay " + snapshot + "` replays it\n");
  const std::string xla = std::string(HBMSIM_SHARED_DIR) +
                          "/xla_dumps/module_0179.jit__kernel.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
  const CliRun dump = Hbmsim("diagnose " + xla);
  EXPECT_EQ(dump.exit_code, 2);
  EXPECT_EQ(dump.out, "hbmsim diagnose: " + xla + ": no BFC allocator dump found (941 lines, 937 not part of a "
                      "dump); it is a recording (xla-text): `hbmsim replay " + xla + "` replays it\n");
  // A binary trace does not say which allocator ran it.
  const std::string hbt = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/hbt_v1/fragmentation.hbt";
  const CliRun trace = Hbmsim("diagnose " + hbt);
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_EQ(trace.out.rfind("hbmsim diagnose: " + hbt + ": no BFC allocator dump found", 0), 0u) << trace.out;
  EXPECT_NE(trace.out.find("it is a recording (binary): `hbmsim replay " + hbt + " --allocator NAME` replays it\n"),
            std::string::npos)
      << trace.out;
}

#endif  // HBMSIM_BINARY

}  // namespace
