// One run of the hbmsim command line, as a function: main() calls RunCli, and
// the Python module (python/) calls RunCliCaptured, so `hbmsim.replay(...)`
// runs exactly the command `hbmsim replay ...` runs (the same parse, the same
// Scenario, the same reports and exit codes), with no second pipeline.
#ifndef HBMSIM_SIM_CLI_CLI_RUN_H_
#define HBMSIM_SIM_CLI_CLI_RUN_H_

#include <string>
#include <vector>

namespace hbmsim::sim::cli {

// `args` without the program name ("replay", "t.trace", "--allocator", "bfc").
// Prints to the process's stdout and stderr; returns the exit code
// (docs/cli.md).
int RunCli(const std::vector<std::string>& args);

struct CapturedRun {
  int exit_code = 0;
  std::string out;  // what the command printed on stdout
  std::string err;  // its stderr lines (notes, or the one error line)
};

// The same run with stdout and stderr kept in strings. Captures only this
// thread's output, so several runs may go on in parallel threads.
CapturedRun RunCliCaptured(const std::vector<std::string>& args);

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_CLI_RUN_H_
