// hbmsim: replays device-memory allocation traces through faithful allocator
// models. The command line itself is RunCli (cli_run.h), shared with the
// Python module, so both run the same commands.
#include <string>
#include <vector>

#include "sim/cli/cli_run.h"

int main(int argc, char** argv) {
  return hbmsim::sim::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
