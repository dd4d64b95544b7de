// Runs the real hbmsim binary (HBMSIM_BINARY) as a child with what the
// safety tests need beyond tests/hardening/child_process.h: any stdout
// (/dev/full), a file size limit (RLIMIT_FSIZE: a disk that fills up at a
// chosen size, without root or a tmpfs), stdin from any file or FIFO, and a
// child that can be signalled mid-run. Each test works in its own folder.
#ifndef HBMSIM_TESTS_SAFETY_CHILD_H_
#define HBMSIM_TESTS_SAFETY_CHILD_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hbmsim::testing {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A fresh folder per test (ctest runs the tests of a binary in parallel).
inline std::string TestDir() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string id = std::string(t->test_suite_name()) + "." + t->name();
  for (char& c : id) c = c == '/' ? '_' : c;
  const std::string dir = ::testing::TempDir() + "/hbmsim_safety_" + id;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

inline std::string Source(const std::string& relative) { return std::string(HBMSIM_SOURCE_DIR) + "/" + relative; }

struct ChildOptions {
  std::string stdin_path = "/dev/null";
  std::string stdout_path;  // empty: a file in the test folder, read back into Result::out
  bool stdout_append = false;  // `>> stdout_path` instead of `>`
  uint64_t file_size_limit = 0;  // 0: none
};

// Named builders (designated initializers that skip a member draw
// -Wmissing-field-initializers from GCC).
inline ChildOptions StdinFrom(std::string path) {
  ChildOptions o;
  o.stdin_path = std::move(path);
  return o;
}
inline ChildOptions StdoutTo(std::string path, bool append = false) {
  ChildOptions o;
  o.stdout_path = std::move(path);
  o.stdout_append = append;
  return o;
}
// Every file the child writes stops at `bytes` (EFBIG), like a full disk.
inline ChildOptions FileSizeLimit(uint64_t bytes, std::string stdout_path = "") {
  ChildOptions o;
  o.stdout_path = std::move(stdout_path);
  o.file_size_limit = bytes;
  return o;
}

struct Result {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
  uint64_t peak_rss_bytes = 0;
};

class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& dir, ChildOptions options = {})
      : out_path_(options.stdout_path.empty() ? dir + "/.stdout" : options.stdout_path),
        err_path_(dir + "/.stderr"),
        read_stdout_(options.stdout_path.empty()) {
    std::vector<std::string> words = {HBMSIM_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      const rlimit cpu{120, 120};
      setrlimit(RLIMIT_CPU, &cpu);
      if (options.file_size_limit > 0) {
        const rlimit fsize{options.file_size_limit, options.file_size_limit};
        setrlimit(RLIMIT_FSIZE, &fsize);
      }
      const int in = open(options.stdin_path.c_str(), O_RDONLY);
      const int out =
          open(out_path_.c_str(), O_WRONLY | O_CREAT | (options.stdout_append ? O_APPEND : O_TRUNC), 0644);
      const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0 || chdir(dir.c_str()) != 0) _exit(125);
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }

  void Signal(int sig) const { ::kill(pid_, sig); }

  Result Wait() {
    Result r;
    int status = 0;
    rusage usage{};
    if (pid_ < 0 || wait4(pid_, &status, 0, &usage) != pid_) {
      ADD_FAILURE() << "cannot run " << HBMSIM_BINARY;
      return r;
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
    if (read_stdout_) r.out = Slurp(out_path_);
    r.err = Slurp(err_path_);
    std::filesystem::remove(err_path_);
    if (read_stdout_) std::filesystem::remove(out_path_);
    return r;
  }

 private:
  std::string out_path_, err_path_;
  bool read_stdout_;
  pid_t pid_ = -1;
};

// Runs hbmsim in `dir` to the end. `line` is split at blanks.
inline Result Hbmsim(const std::string& dir, const std::string& line, ChildOptions options = {}) {
  std::vector<std::string> args;
  std::istringstream words(line);
  for (std::string w; words >> w;) args.push_back(w);
  return Child(args, dir, options).Wait();
}

// Runs a shell command line in `dir` (pipes, FIFOs), with $HBMSIM set.
inline Result Shell(const std::string& dir, const std::string& line) {
  const std::string cmd = "cd " + dir + " && HBMSIM=" + HBMSIM_BINARY + " bash -c '" + line +
                          "' >" + dir + "/.stdout 2>" + dir + "/.stderr";
  const int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(dir + "/.stdout");
  r.err = Slurp(dir + "/.stderr");
  std::filesystem::remove(dir + "/.stdout");
  std::filesystem::remove(dir + "/.stderr");
  return r;
}

inline int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_SAFETY_CHILD_H_
