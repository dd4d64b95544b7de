#include "sim/cli/scenario_flags.h"

#include "fmt/format.h"

namespace hbmsim::sim::cli {

void AddDeviceFlag(CLI::App& app, std::string& device, std::string_view what) {
  app.add_option("--device", device,
                 fmt::format("{} (default: the one with the recorded OOM, else the one with the most events; for "
                             "formats that do not list their devices, the first event's)",
                             what));
}

void AddStartStateFlag(CLI::App& app, std::string& start_state, std::string_view help) {
  app.add_option("--start-state", start_state, std::string(help))->check(CLI::IsMember({"seed", "place"}));
}

void AddSetFlag(CLI::App& app, std::vector<std::string>& sets, std::string_view help) {
  app.add_option("--set", sets, std::string(help))->allow_extra_args(false);
}

void AddJobsFlag(CLI::App& app, int& jobs, std::string_view what) {
  app.add_option("--jobs", jobs,
                 fmt::format("{} run in parallel (default: all cores); the output never depends on it", what));
}

}  // namespace hbmsim::sim::cli
