// The flags every command that replays a recording declares alike: which
// device, how a mid-run start state is taken, the policy's option edits and
// the trials run in parallel. Each command says in its own words what it
// does with them; what the value means and how it is checked is said here
// once, so `hbmsim COMMAND --help` reads the same across the commands.
#ifndef HBMSIM_SIM_CLI_SCENARIO_FLAGS_H_
#define HBMSIM_SIM_CLI_SCENARIO_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"

namespace hbmsim::sim::cli {

// --device: `what` is the command's use of it ("size this device"); the
// default the scenario picks follows it, as replay, size and compare say it.
void AddDeviceFlag(CLI::App& app, std::string& device, std::string_view what);

// --start-state seed|place: `help` is the whole text (each command says
// what seed and place mean for its answer).
void AddStartStateFlag(CLI::App& app, std::string& start_state, std::string_view help);

// --set KEY=VALUE, repeatable; one value a flag.
void AddSetFlag(CLI::App& app, std::vector<std::string>& sets, std::string_view help);

// --jobs: `what` runs in parallel on all cores by default ("trials").
void AddJobsFlag(CLI::App& app, int& jobs, std::string_view what);

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_SCENARIO_FLAGS_H_
