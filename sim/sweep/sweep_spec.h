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
//
// Order (the task index): recordings in the order their patterns are listed,
// each glob's matches sorted, a path matched twice kept once; then
// allocators; then settings combinations (the last key varies fastest, the
// first combination is "today", the baseline of the report's savings); then
// the questions: each limit, size, advise. The same spec over the same files
// is the same list, so `--shard I/N` (task index % N == I) slices it the same
// way on every machine.
#ifndef HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_
#define HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace hbmsim::sweep {

struct SweepTask {
  size_t index = 0;
  std::string recording;  // the path the command opens
  std::string allocator;
  std::vector<std::pair<std::string, std::string>> settings;  // --set KEY=VALUE, in spec order
  std::string question;                                       // "limit", "size" or "advise"
  std::string bytes_limit;                                    // for "limit"
  std::string device;                                         // empty: the command's default

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

// Reads and expands SPEC.yaml. Errors name the file and line
// ("sweep.yaml:3: recordings: no file matches 'snaps/*.pickle'").
absl::StatusOr<SweepSpec> LoadSweepSpec(const std::string& path);

// "I/N" with 0 <= I < N.
absl::StatusOr<std::pair<size_t, size_t>> ParseShard(const std::string& text);

}  // namespace hbmsim::sweep

#endif  // HBMSIM_SIM_SWEEP_SWEEP_SPEC_H_
