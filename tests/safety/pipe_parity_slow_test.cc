// Issue 45's proof, under the ctest label `slow`: every file in ../shared
// (the recordings, logs and OOM texts; not the READMEs), every command, by
// path and through `-`, /dev/stdin and a FIFO (pipe_parity.h). One test per
// file and command, so ctest spreads them over the cores.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/pipe_parity.h"

namespace hbmsim::testing {
namespace {

// Every shared file a command could be given, sorted (the order of a
// directory listing is the file system's); none when ../shared is absent,
// which SharedFilesAreThere reports.
std::vector<std::string> SharedFiles() {
  std::vector<std::string> files;
  std::error_code error;
  const std::filesystem::path root(SharedDir());
  for (auto it = std::filesystem::recursive_directory_iterator(root, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file()) continue;
    const std::string relative = std::filesystem::relative(it->path(), root).string();
    // The READMEs describe the data; hooks/ holds the harness's scripts, not recordings.
    if (it->path().extension() == ".md" || relative.starts_with("hooks/")) continue;
    files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<ParityCase> Cases() {
  std::vector<ParityCase> cases;
  for (const std::string& file : SharedFiles()) {
    for (const std::string& command : ParityCommands()) cases.push_back({file, command});
  }
  return cases;
}

TEST(PipeParitySharedDir, SharedFilesAreThere) {
  EXPECT_GE(SharedFiles().size(), 50u) << "expected the shared recordings in " << SharedDir();
}

class PipeParityEveryFile : public ::testing::TestWithParam<ParityCase> {};

TEST_P(PipeParityEveryFile, SameOutputByPathDashDevStdinAndFifo) {
  ExpectSameThroughEveryWay(GetParam().file, GetParam().command);
}

INSTANTIATE_TEST_SUITE_P(Shared, PipeParityEveryFile, ::testing::ValuesIn(Cases()), ParityCaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PipeParityEveryFile);

}  // namespace
}  // namespace hbmsim::testing
