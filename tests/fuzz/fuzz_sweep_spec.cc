// libFuzzer target: the sweep spec reader (sim/sweep/sweep_spec.h). A spec
// either expands to a task list within the cap, every task of which makes a
// command line and a key, or is refused with one line naming the file.
// Patterns match themselves (no filesystem walk: a fuzzed `/*/*/*` would
// time out on the machine, not in the reader).
#include <cstddef>
#include <cstdint>

#include "sim/sweep/sweep_spec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Small enough that an input at the cap runs in milliseconds.
constexpr size_t kFuzzMaxTasks = 2000;

}  // namespace

HBMSIM_FUZZ_ENTRY(sweep_spec, SweepSpecFuzzCorpus) {
  using namespace hbmsim;
  const std::string name = "fuzz/sweep.yaml";
  sweep::SweepSpecOptions options;
  options.expand = [](const std::string& pattern) {
    return pattern.empty() ? std::vector<std::string>{} : std::vector<std::string>{pattern};
  };
  options.max_tasks = kFuzzMaxTasks;
  absl::StatusOr<sweep::SweepSpec> spec = sweep::ParseSweepSpec(fuzz::AsString(data, size), name, options);
  if (!spec.ok()) {
    fuzz::CheckErrorMessage(spec.status(), name);
    return 0;
  }
  if (spec->tasks.empty() || spec->tasks.size() > kFuzzMaxTasks) fuzz::Fail("task count outside 1..cap");
  for (size_t i = 0; i < spec->tasks.size(); ++i) {
    const sweep::SweepTask& task = spec->tasks[i];
    if (task.index != i) fuzz::Fail("task index is not its position");
    if (task.Args("r.json").back() != "r.json") fuzz::Fail("command line does not end with its --json path");
    if (task.Key()["task"] != i) fuzz::Fail("key names another task");
  }
  return 0;
}
