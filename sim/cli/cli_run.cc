#include "sim/cli/cli_run.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/cli/command.h"
#include "sim/cli/command_line.h"
#include "sim/cli/version.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/viz/progress.h"
#include "trace/io/output_file.h"

namespace hbmsim::sim::cli {
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

// The first argument when it is neither a flag nor a command: CLI11 alone
// would answer "A subcommand is required", which hides the typo.
std::string UnknownCommand(const CommandLine& line, const std::vector<std::string>& args) {
  if (args.empty() || args.front().empty() || args.front().front() == '-') return {};
  std::vector<std::string> names;
  for (const auto& [sub, command] : line.commands) {
    if (sub->get_name() == args.front()) return {};
    names.push_back(sub->get_name());
  }
  return fmt::format("hbmsim: unknown command '{}' (commands: {}; see hbmsim --help)", OneLineMessage(args.front()),
                     fmt::join(names, ", "));
}

// The first value flag or argument given an empty value (`--json ''`,
// `--bytes-limit=`), as "hbmsim replay: --json: an empty value ...". An empty
// path or number is never meant, and CLI11 would hand it on as if the flag
// were absent (every command tests `json_.empty()`), silently.
std::string EmptyValue(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_type_size() == 0) continue;  // a flag: no value to be empty
      for (const std::string& value : opt->results()) {
        if (!value.empty()) continue;
        const std::string name = opt->get_name();
        return fmt::format("{}: {}: an empty value (leave {} out, or give it a value; see {} --help)",
                           CommandPath(app), name, name, CommandPath(app));
      }
    }
  }
  return {};
}

int Run(const std::vector<std::string>& args, bool captured) {
  // A policy row that does not register is a bug in hbmsim, said at start-up
  // by every command rather than met as a missing policy halfway through one.
  if (const absl::Status& registry = BuiltinPoliciesStatus(); !registry.ok()) {
    PrintError(fmt::format("hbmsim: internal error: the built-in policies do not register: {}",
                           std::string(registry.message())));
    return kExitInternal;
  }
  std::unique_ptr<CommandLine> line = MakeCommandLine();
  CLI::App& app = line->app;
  if (std::string unknown = UnknownCommand(*line, args); !unknown.empty()) {
    PrintError(unknown);
    return kExitBadInput;
  }
  // CLI11 parses a vector given in reverse order, without the program name.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError(fmt::format("{}: {} (see {} --help)", CommandPath(app), OneLineMessage(e.what()), CommandPath(app)));
    return kExitBadInput;
  }
  if (std::string empty = EmptyValue(app); !empty.empty()) {
    PrintError(empty);
    return kExitBadInput;
  }
  // Checked before any work, as a flag would be: the progress lines only
  // read it later, when a malformed value could no longer be reported.
  if (absl::StatusOr<viz::ProgressPace> pace = viz::ProgressPaceFromEnvironment(); !pace.ok()) {
    PrintError(fmt::format("{}: {}", CommandPath(app), std::string(pace.status().message())));
    return kExitBadInput;
  }
  try {
    for (auto& [sub, command] : line->commands) {
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

std::unique_ptr<CommandLine> MakeCommandLine() {
  auto line = std::make_unique<CommandLine>();
  CLI::App& app = line->app;
  app.description(
      "hbmsim replays a device-memory allocation trace (text trace, PyTorch snapshot, TF/JAX profile, BFC log, "
      "XLA dump) through a faithful model of a GPU/TPU allocator, to tell a true out-of-memory from fragmentation "
      "and to try other configurations.");
  app.name("hbmsim");
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("hbmsim {}", kVersion), "print the version and exit");
  app.footer(
      "Exit codes: 0 everything fit, 1 some allocation failed, 2 usage error or bad input, 3 internal "
      "error. Documentation: hbmsim help.");
  for (const CommandInfo& info : RegisteredCommands()) {
    CLI::App* sub = app.add_subcommand(info.name, info.summary);
    std::unique_ptr<Command> command = info.make();
    command->Configure(*sub);
    line->commands.emplace_back(sub, std::move(command));
  }
  return line;
}

int RunCli(const std::vector<std::string>& args) { return Run(args, /*captured=*/false); }

CapturedRun RunCliCaptured(const std::vector<std::string>& args) {
  CapturedRun run;
  io::ScopedStdoutCapture out(&run.out);
  ScopedErrorCapture err(&run.err);
  run.exit_code = Run(args, /*captured=*/true);
  return run;
}

}  // namespace hbmsim::sim::cli
