// hbmsim: replays device-memory allocation traces through faithful allocator
// models. main() only wires the registered subcommands into CLI11 and turns
// every way of failing into one stderr line and a contract exit code.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "sim/cli/command.h"

namespace {

using hbmsim::cli::Command;

std::string CommandPath(const CLI::App& app) {
  std::string path = "hbmsim";
  for (const CLI::App* sub : app.get_subcommands()) path += " " + sub->get_name();
  return path;
}

// Every write is checked, standard output included: a report that could not
// be written (`> /dev/full`, a closed pipe) is exit 2, unless the command has
// already said why it fails with 2 (one stderr line per run).
int CheckedStdout(const std::string& command, int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if ((flushed && !std::ferror(stdout)) || code == hbmsim::cli::kExitBadInput) return code;
  fmt::print(stderr, "{}: cannot write standard output: {}\n", command, std::strerror(errno != 0 ? errno : EIO));
  return hbmsim::cli::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "hbmsim replays a device-memory allocation trace (text trace, PyTorch snapshot) through a faithful "
      "model "
      "of a GPU/TPU allocator, to tell a true out-of-memory from fragmentation and to try other "
      "configurations.",
      "hbmsim");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 everything fit, 1 some allocation failed, 2 usage error or bad input, 3 internal "
      "error.");
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const hbmsim::cli::CommandInfo& info : hbmsim::cli::RegisteredCommands()) {
    CLI::App* sub = app.add_subcommand(info.name, info.summary);
    std::unique_ptr<Command> command = info.make();
    command->Configure(*sub);
    commands.emplace_back(sub, std::move(command));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "{}: {} (see {} --help)\n", CommandPath(app), hbmsim::cli::OneLineMessage(e.what()),
               CommandPath(app));
    return hbmsim::cli::kExitBadInput;
  }
  try {
    for (auto& [sub, command] : commands) {
      if (!sub->parsed()) continue;
      const int code = CheckedStdout(CommandPath(app), command->Run());
      hbmsim::cli::FlushNotes(code);
      return code;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal error: {}\n", CommandPath(app), hbmsim::cli::OneLineMessage(e.what()));
    return hbmsim::cli::kExitInternal;
  }
  return hbmsim::cli::kExitBadInput;
}
