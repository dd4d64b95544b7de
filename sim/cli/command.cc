#include "sim/cli/command.h"

#include <algorithm>

namespace hbmsim::cli {
namespace {

// A function-local static: safe to use from other files' static initializers.
std::vector<CommandInfo>& Registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

}  // namespace

CommandRegistration::CommandRegistration(std::string name, std::string summary,
                                         std::unique_ptr<Command> (*make)()) {
  Registry().push_back({std::move(name), std::move(summary), make});
}

std::vector<CommandInfo> RegisteredCommands() {
  std::vector<CommandInfo> out = Registry();
  std::sort(out.begin(), out.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace hbmsim::cli
