#include "sim/cli/cli_run.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <utility>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "sim/cli/command.h"
#include "trace/io/output_file.h"

namespace hbmsim::cli {
namespace {

std::string CommandPath(const CLI::App& app) {
  std::string path = "hbmsim";
  for (const CLI::App* sub : app.get_subcommands()) path += " " + sub->get_name();
  return path;
}

// Every write is checked, standard output included: a report that could not
// be written (`> /dev/full`, a closed pipe) is exit 2, unless the command has
// already said why it fails with 2 (one stderr line per run). A captured run
// wrote to a string, which cannot fail.
int CheckedStdout(const std::string& command, int code, bool captured) {
  if (captured) return code;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if ((flushed && !std::ferror(stdout)) || code == kExitBadInput) return code;
  PrintError(fmt::format("{}: cannot write standard output: {}", command, std::strerror(errno != 0 ? errno : EIO)));
  return kExitBadInput;
}

int Run(const std::vector<std::string>& args, bool captured) {
  CLI::App app(
      "hbmsim replays a device-memory allocation trace (text trace, PyTorch snapshot) through a faithful "
      "model of a GPU/TPU allocator, to tell a true out-of-memory from fragmentation and to try other "
      "configurations.",
      "hbmsim");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 everything fit, 1 some allocation failed, 2 usage error or bad input, 3 internal "
      "error.");
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const CommandInfo& info : RegisteredCommands()) {
    CLI::App* sub = app.add_subcommand(info.name, info.summary);
    std::unique_ptr<Command> command = info.make();
    command->Configure(*sub);
    commands.emplace_back(sub, std::move(command));
  }
  // CLI11 parses a vector given in reverse order, without the program name.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError(fmt::format("{}: {} (see {} --help)", CommandPath(app), OneLineMessage(e.what()), CommandPath(app)));
    return kExitBadInput;
  }
  try {
    for (auto& [sub, command] : commands) {
      if (!sub->parsed()) continue;
      const int code = CheckedStdout(CommandPath(app), command->Run(), captured);
      FlushNotes(code);
      return code;
    }
  } catch (const std::exception& e) {
    FlushNotes(kExitInternal);
    PrintError(fmt::format("{}: internal error: {}", CommandPath(app), OneLineMessage(e.what())));
    return kExitInternal;
  }
  return kExitBadInput;
}

}  // namespace

int RunCli(const std::vector<std::string>& args) { return Run(args, /*captured=*/false); }

CapturedRun RunCliCaptured(const std::vector<std::string>& args) {
  CapturedRun run;
  io::ScopedStdoutCapture out(&run.out);
  ScopedErrorCapture err(&run.err);
  run.exit_code = Run(args, /*captured=*/true);
  return run;
}

}  // namespace hbmsim::cli
