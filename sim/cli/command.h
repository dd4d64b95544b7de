// Subcommands of the hbmsim binary register themselves: each lives in its own
// sim/cli/<name>_command.cc with a file-scope CommandRegistration, so adding
// `convert`, `size`, `compare`, `diagnose` or `gen` is a new file only. The
// files are sources of the executable (see CMakeLists.txt), so the linker
// cannot drop the registrations.
#ifndef HBMSIM_SIM_CLI_COMMAND_H_
#define HBMSIM_SIM_CLI_COMMAND_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace hbmsim::sim::cli {

// Exit codes shared by every subcommand (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,        // the work ran and every allocation fit
  kExitFailures = 1,  // the work ran and at least one allocation failed
  kExitBadInput = 2,  // usage error or bad input; one line on stderr names the file:line or option
  kExitInternal = 3,  // internal error: a broken invariant (a bug in hbmsim; it must never happen)
};

// A command step that failed: the one stderr line and the exit code. Steps
// return std::optional<CommandFailure>; the command prints and returns it.
struct CommandFailure {
  int code;
  std::string message;
};

// A status from a library, as a failure: an internal error (a broken
// invariant) is exit 3 and says so; anything else is bad input, exit 2.
CommandFailure FailureFromStatus(const absl::Status& s);
// A status from a user's input or flags, as exit 2 whatever its code.
CommandFailure BadInput(const absl::Status& s);

class Command {
 public:
  virtual ~Command() = default;
  // Declares the subcommand's arguments on `app` (named and described already).
  virtual void Configure(CLI::App& app) = 0;
  // Runs after a successful parse and returns the exit code. Messages for the
  // user go to stderr, one line each, prefixed "hbmsim <name>: ".
  virtual int Run() = 0;
};

struct CommandInfo {
  std::string name;
  std::string summary;
  std::unique_ptr<Command> (*make)();
};

// Constructed at file scope by each *_command.cc.
class CommandRegistration {
 public:
  CommandRegistration(std::string name, std::string summary, std::unique_ptr<Command> (*make)());
};

// `message` made fit for one stderr line: line breaks and tabs become spaces,
// other control bytes (from a binary file quoted in an error) print as \xNN.
std::string OneLineMessage(std::string_view message);

// A CLI11 check for unsigned integer options: the strict parse of
// trace/core/numbers.h, so "-1" is an error instead of wrapping to 2^64-1.
CLI::Validator UnsignedNumber();

// Notes and warnings for stderr ("hbmsim size: t.trace: 8 events ...") are
// held until the command knows its exit code: a run that ends with exit 2 or
// 3 prints its one error line alone (docs/cli.md: one line names the
// problem), any other run prints them all. Note() takes the whole
// line without its newline; FlushNotes() prints (or drops) what is held and
// is called by each command before its final message, and by main().
void Note(std::string line);
void FlushNotes(int exit_code);

// Prints one line (without its newline) on stderr, or, while a
// ScopedErrorCapture is alive on this thread, appends it to the capture.
// Commands print their error line and notes through it (cli_run.h).
void PrintError(std::string_view line);
class ScopedErrorCapture {
 public:
  explicit ScopedErrorCapture(std::string* sink);
  ~ScopedErrorCapture();
  ScopedErrorCapture(const ScopedErrorCapture&) = delete;
  ScopedErrorCapture& operator=(const ScopedErrorCapture&) = delete;

 private:
  std::string* previous_;
};

// Every registered command, sorted by name (static initialization order across
// files is unspecified; help output must not depend on it).
std::vector<CommandInfo> RegisteredCommands();

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_COMMAND_H_
