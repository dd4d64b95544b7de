// Runs the real hbmsim binary (HBMSIM_BINARY) from the source directory and
// captures its exit code, stdout and stderr, so end-to-end tests assert what a
// user would see.
#ifndef HBMSIM_TESTS_CLI_CLI_TEST_UTIL_H_
#define HBMSIM_TESTS_CLI_CLI_TEST_UTIL_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace hbmsim::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Unique per test: ctest runs each TEST as its own process, in parallel.
inline std::string TempPath(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/hbmsim_cli_" + (test ? test->name() : "none") + "_" + name;
}

// `args` is appended to the binary's path as shell words; run in the source dir
// so example paths read as they do in the README. With `pipe_from`, that file
// is piped into hbmsim's stdin through `cat`.
inline CliRun RunHbmsim(const std::string& args, const std::string& pipe_from = "") {
  const std::string out = TempPath("stdout.txt");
  const std::string err = TempPath("stderr.txt");
  const std::string pipe = pipe_from.empty() ? "" : "cat " + pipe_from + " | ";
  const std::string cmd = std::string("cd ") + HBMSIM_SOURCE_DIR + " && " + pipe + HBMSIM_BINARY + " " +
                          args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = ReadFile(out);
  run.err = ReadFile(err);
  return run;
}

// The shared PyTorch snapshots, relative to the tests' working folder.
inline const std::string kTorchSnapshotDir = "../shared/torch_snapshots/";

// Two shared recordings that say which allocator wrote them: a PyTorch
// snapshot and a TensorFlow profile (relative to the tests' working folder).
inline const std::string kExpandableOomSnapshot =
    "../shared/torch_snapshots/h100x4_expandable_segments_oom.pickle";
inline const std::string kKerasFitProfile = "../shared/profiler/tf_t4_keras_fit.xplane.pb";

inline int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_CLI_CLI_TEST_UTIL_H_
