// The whole command line as CLI11 objects: the top-level app with every
// registered command configured on its subcommand. RunCli (cli_run.cc)
// parses with it; `hbmsim completion` walks it, so the completion script
// names exactly the flags the parser takes. Kept apart from cli_run.h so
// main.cc and the Python module do not compile CLI11.
#ifndef HBMSIM_SIM_CLI_COMMAND_LINE_H_
#define HBMSIM_SIM_CLI_COMMAND_LINE_H_

#include <memory>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "sim/cli/command.h"

namespace hbmsim::sim::cli {

struct CommandLine {
  CLI::App app;
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
};

std::unique_ptr<CommandLine> MakeCommandLine();

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_COMMAND_LINE_H_
