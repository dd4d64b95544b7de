// Issue 45: a recording given by path, piped into `-`, piped into /dev/stdin
// and written into a FIFO gives every command the same answer: the same exit
// code, stdout, stderr and --json (convert: the same trace written).
//
// The one difference by construction is the input's name, which the output
// repeats as the user spelled it: the path's runs name the file, the others
// `-` (messages say `<stdin>`), `/dev/stdin` or `fifo`. That name, and only
// it, is normalised before the outputs are compared: the path's output with
// the path replaced by the way's spelling, `<stdin>` read as `-`.
#ifndef HBMSIM_TESTS_SAFETY_PIPE_PARITY_H_
#define HBMSIM_TESTS_SAFETY_PIPE_PARITY_H_

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {

// Every command that reads one recording (docs/cli.md); `scale` takes two,
// `gen` and `sweep` none.
inline const std::vector<std::string>& ParityCommands() {
  static const std::vector<std::string> commands = {"replay",  "size",     "advise", "compare",
                                                    "inspect", "diagnose", "convert"};
  return commands;
}

inline std::string SharedDir() { return std::string(HBMSIM_SHARED_DIR); }

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string written;  // the --json file, or convert's trace
};

inline std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

inline Outcome Normalised(Outcome o, const std::string& from, const std::string& to) {
  o.out = ReplaceAll(o.out, from, to);
  o.err = ReplaceAll(o.err, from, to);
  o.written = ReplaceAll(o.written, from, to);
  return o;
}

// `command` on `input` as the shell sees it ("FILE", "-", "fifo"): its
// report on stdout, its JSON (or converted trace) into the test's folder.
inline std::string CommandArgs(const std::string& command, const std::string& input) {
  if (command == "convert") return fmt::format("convert {} out.trace", input);
  return fmt::format("{} {} --json out.json", command, input);
}

inline Outcome Collect(const Result& r, const std::string& dir) {
  Outcome o{r.exit_code, r.out, r.err, ""};
  for (const char* name : {"/out.json", "/out.trace"}) {
    if (std::filesystem::exists(dir + name)) o.written = Slurp(dir + name);
    std::filesystem::remove(dir + name);
  }
  return o;
}

// `file` (absolute) through `way`: "path", "-", "/dev/stdin" or "fifo".
inline Outcome RunWay(const std::string& dir, const std::string& file, const std::string& command,
                      const std::string& way) {
  if (way == "path") return Collect(Hbmsim(dir, CommandArgs(command, file)), dir);
  if (way == "fifo") {
    std::filesystem::remove(dir + "/fifo");
    if (::mkfifo((dir + "/fifo").c_str(), 0600) != 0) ADD_FAILURE() << "cannot make a FIFO in " << dir;
    return Collect(
        Shell(dir, fmt::format("(cat {} > fifo &) ; $HBMSIM {}", file, CommandArgs(command, "fifo"))), dir);
  }
  return Collect(Shell(dir, fmt::format("cat {} | $HBMSIM {}", file, CommandArgs(command, way))), dir);
}

// The check itself: `command` on `relative` (under the shared folder) by
// path, then through each other way, compared after the name is normalised.
inline void ExpectSameThroughEveryWay(const std::string& relative, const std::string& command) {
  const std::string file = SharedDir() + "/" + relative;
  ASSERT_TRUE(std::filesystem::is_regular_file(file))
      << file << " is missing: the shared recordings are expected beside the repository (../shared)";
  const std::string dir = TestDir();
  const Outcome by_path = RunWay(dir, file, command, "path");
  for (const std::string way : {"-", "/dev/stdin", "fifo"}) {
    SCOPED_TRACE(fmt::format("hbmsim {} through {}", CommandArgs(command, relative), way));
    const Outcome expected = Normalised(by_path, file, way);
    Outcome got = RunWay(dir, file, command, way);
    if (way == "-") got = Normalised(got, "<stdin>", "-");  // what messages call `-`
    EXPECT_EQ(got.exit_code, expected.exit_code) << got.err;
    EXPECT_EQ(got.out, expected.out);
    EXPECT_EQ(got.err, expected.err);
    EXPECT_EQ(got.written, expected.written);
  }
}

struct ParityCase {
  std::string file;  // under the shared folder
  std::string command;
};

inline void PrintTo(const ParityCase& c, std::ostream* os) { *os << c.command << " " << c.file; }

// A gtest name: the command and the file, letters and digits only.
inline std::string ParityCaseName(const ::testing::TestParamInfo<ParityCase>& info) {
  std::string name = info.param.command + "_" + info.param.file;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_SAFETY_PIPE_PARITY_H_
