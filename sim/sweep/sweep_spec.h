// A sweep: recordings x allocator configurations x settings grid x questions,
// expanded into a deterministic list of tasks, each one hbmsim command line.
//
//   # sweep.yaml (paths and globs relative to this file's folder)
//   recordings: [snapshots/*.pickle, jobs/oom.trace]
//   allocators: [torch]                 # built-in names or YAML configs
//   settings:                           # a grid: every combination is one configuration
//     expandable_segments: [false, true]
//   limits: [16GiB, 24GiB]              # replay at each limit   } at least one
//   size: true                          # the smallest fitting limit } question
//   advise: false                       # hbmsim advise
//   device: 0                           # optional, for every recording
//   scale: {at: {128: a.pickle, 256: b.pickle}, to: [1024], fit_limits: [80GiB]}
//                                       # hbmsim scale (sim/sweep/sweep_scale.h);
//                                       # recordings: optional with it
//
// Order (the task index): recordings in the order their patterns are listed,
// each glob's matches sorted, a path matched twice kept once; then
// allocators; then settings combinations (the last key varies fastest, the
// first combination is "today", the baseline of the report's savings); then
// the questions: each limit, size, advise. Then the scale tasks: allocators,
// settings combinations, each `to:`, each fit limit. The same spec over the same files
// is the same list, so `--shard I/N` (task index % N == I) slices it the same
// way on every machine.
#ifndef HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_
#define HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace hbmsim::sim::sweep {

struct SweepTask {
  size_t index = 0;
  std::string recording;  // the path the command opens
  std::string allocator;
  std::vector<std::pair<std::string, std::string>> settings;  // --set KEY=VALUE, in spec order
  std::string question;                                       // "limit", "size", "advise" or "scale"
  std::string bytes_limit;                                    // for "limit", and scale's --fit-limit
  std::string device;                                         // empty: the command's default
  // scale only: the recordings (value, path), and --to N or --step K.
  std::vector<std::pair<std::string, std::string>> at;
  std::string to;
  std::string step;

  // The hbmsim command line (without the program name) that answers the
  // task, writing its --json report to `json_path`. Commands run with
  // --jobs 1: a sweep parallelises across tasks, not inside one.
  std::vector<std::string> Args(const std::string& json_path) const;
  // What identifies the task in its result line and in the report.
  nlohmann::ordered_json Key() const;
  // "expandable_segments=true,garbage_collection=false" ("" for no settings).
  std::string SettingsText() const;
  // The result file's name: task-000042.json.
  std::string FileName() const;
};

struct SweepSpec {
  std::string path;
  std::vector<SweepTask> tasks;
};

// A spec expanding to more tasks than this is refused before any is made (a
// settings grid of 20 keys of 2 values each is already 10^6 combinations):
// memory stays bounded whatever the spec says. 3,000 recordings x 2
// allocators x 8 settings x 2 questions is 96,000; split larger sweeps.
inline constexpr size_t kMaxSweepTasks = 100'000;
// A spec file larger than this is not a sweep spec.
inline constexpr size_t kMaxSweepSpecBytes = 4 << 20;

struct SweepSpecOptions {
  // A recording pattern (already made relative to the spec's folder) to the
  // paths it matches, sorted; the filesystem's glob(3) when empty. Tests and
  // the fuzz target pass their own, so a fuzzed pattern never walks `/`.
  std::function<std::vector<std::string>(const std::string& pattern)> expand;
  size_t max_tasks = kMaxSweepTasks;
};

// Reads and expands SPEC.yaml. Errors name the file and line
// ("sweep.yaml:3: recordings: no file matches 'snaps/*.pickle'").
absl::StatusOr<SweepSpec> LoadSweepSpec(const std::string& path);
// The same from the spec's text; `path` names it in errors and gives the
// folder relative patterns and YAML configs are resolved against.
absl::StatusOr<SweepSpec> ParseSweepSpec(std::string_view text, const std::string& path,
                                         const SweepSpecOptions& options = {});

// "I/N" with 0 <= I < N.
absl::StatusOr<std::pair<size_t, size_t>> ParseShard(const std::string& text);

}  // namespace hbmsim::sim::sweep

#endif  // HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_
