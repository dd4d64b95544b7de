// Runs the real hbmsim binary (HBMSIM_BINARY) as a child process with bounds,
// and reports what a resource-bound test needs: the exit code, stdout, stderr
// and the child's peak resident memory (getrusage via wait4). A CPU-time
// rlimit turns a hang into a SIGXCPU death, which the test then reports as a
// failure; nothing here measures wall time.
#ifndef HBMSIM_TESTS_HARDENING_CHILD_PROCESS_H_
#define HBMSIM_TESTS_HARDENING_CHILD_PROCESS_H_

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {

// Unique per test, parameterized ones included (their names hold a '/').
inline std::string ScratchPath(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string id = test ? std::string(test->test_suite_name()) + "." + test->name() : "none";
  for (char& c : id) c = c == '/' ? '_' : c;
  return ::testing::TempDir() + "/hbmsim_hardening_" + id + "_" + name;
}

// Splits a command line at blanks (test paths hold none).
inline std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    const size_t end = std::min(line.find(' ', i), line.size());
    if (end > i) words.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  return words;
}

struct BoundedRun {
  int exit_code = -1;  // 128 + signal when the child was killed
  std::string out;
  std::string err;
  uint64_t peak_rss_bytes = 0;
};

struct Bounds {
  uint64_t cpu_seconds = 120;  // a hang dies of SIGXCPU instead of stalling ctest
  std::string stdin_path;      // empty: /dev/null
};

// `args` are hbmsim's arguments (no shell: a path with spaces stays one word).
// The child runs in the source directory, as the CLI tests do.
inline BoundedRun RunBounded(const std::vector<std::string>& args, const Bounds& bounds = {}) {
  const std::string out_path = ScratchPath("stdout.txt");
  const std::string err_path = ScratchPath("stderr.txt");
  std::vector<std::string> words = {HBMSIM_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string in_path = bounds.stdin_path.empty() ? "/dev/null" : bounds.stdin_path;
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    const rlimit cpu{bounds.cpu_seconds, bounds.cpu_seconds};
    setrlimit(RLIMIT_CPU, &cpu);
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || chdir(HBMSIM_SOURCE_DIR) != 0) _exit(125);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  BoundedRun run;
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) {
    ADD_FAILURE() << "cannot run " << HBMSIM_BINARY;
    return run;
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  run.out = ReadFile(out_path);
  run.err = ReadFile(err_path);
  return run;
}

// A file of `size` bytes that starts with `head` and continues with NUL bytes,
// made sparse with truncate(): a 1 GB input costs no disk and no time to write.
inline std::string SparseFile(const std::string& name, const std::string& head, uint64_t size) {
  const std::string path = ScratchPath(name);
  WriteFile(path, head);
  if (truncate(path.c_str(), static_cast<off_t>(size)) != 0) ADD_FAILURE() << "cannot size " << path;
  return path;
}

inline BoundedRun RunBounded(const std::string& line, const Bounds& bounds = {}) {
  return RunBounded(Words(line), bounds);
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_HARDENING_CHILD_PROCESS_H_
