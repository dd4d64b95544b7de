// What a sweep spec may make, bounded before it is made (issue 48). The task
// cap (kMaxSweepTasks) bounds how many tasks a spec expands to, not how large
// each is: one setting of 1,000,000 characters copied into 99,000 tasks asked
// for ~99 GB and died of std::bad_alloc. So a spec is refused, exit 2 naming
// the file and line, when
//   - it holds more items than kMaxSweepSpecItems (yaml-cpp spends ~460 bytes
//     per node: a 1 MB spec of `a,a,a,...` was 230 MB before any check);
//   - one value (a recording pattern, allocator, setting key or value, limit)
//     is longer than kMaxSweepValueBytes;
//   - its tasks would hold more than kMaxSweepTaskBytes of text between them,
//     counted as tasks x the largest task before any task is made.
#ifndef HBMSIM_SIM_SWEEP_SPEC_BOUNDS_H_
#define HBMSIM_SIM_SWEEP_SPEC_BOUNDS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sim/sweep/sweep_scale.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sim::sweep {

// Items: commas plus lines, an upper bound on the YAML nodes of the text.
inline constexpr size_t kMaxSweepSpecItems = 100'000;
// A path is at most PATH_MAX; no allocator option takes a longer value.
inline constexpr size_t kMaxSweepValueBytes = 4096;
// Every task's strings together (a task of 2 KiB x 100,000 tasks is 200 MiB).
inline constexpr size_t kMaxSweepTaskBytes = size_t{256} << 20;

// "PATH: more than N items ..." when the text has too many to parse.
absl::Status CheckSpecItems(std::string_view text, const std::string& path);

// The bytes one task holds: its struct and every string it carries.
size_t TaskBytes(size_t recording, size_t allocator,
                 const std::vector<std::pair<std::string, std::string>>& settings, size_t limit,
                 size_t device);

// The bytes of the largest task a spec makes: the longest of each string,
// with a scale task's recordings (each of its tasks copies them).
size_t LargestTaskBytes(const std::string& folder, const std::vector<std::string>& recordings,
                        const std::vector<std::string>& allocators,
                        const std::vector<std::vector<std::pair<std::string, std::string>>>& grid,
                        const std::vector<std::string>& limits, const std::optional<ScaleQuestion>& scale,
                        const std::string& device);

// Bytes of the longest string in `values` (0 for none).
size_t Longest(const std::vector<std::string>& values);

// What a spec multiplies into tasks.
struct TaskCounts {
  size_t recordings = 0;
  size_t allocators = 0;
  size_t settings = 0;       // combinations of the settings grid
  size_t per_recording = 0;  // questions asked of each recording (limits, size, advise)
  size_t scale_per_configuration = 0;  // a scale: question's tasks per allocator and setting
};

// recordings x allocators x settings x per-recording questions, plus
// allocators x settings x scale tasks, counted before any is made: at most
// `max_tasks`, and at most kMaxSweepTaskBytes with each task `task_bytes`.
// The error names `node` of `file`.
absl::Status CheckTaskCount(const std::string& file, const YAML::Node& node, const TaskCounts& counts,
                            size_t max_tasks, size_t task_bytes);
// A scalar no longer than kMaxSweepValueBytes; the error names `key`.
absl::Status CheckValueLength(const std::string& file, const YAML::Node& scalar, const std::string& key);
// The two refusals, for a count made elsewhere (the settings grid).
absl::Status TooManyTasks(const std::string& file, const YAML::Node& node, size_t max_tasks);
absl::Status TooLargeTasks(const std::string& file, const YAML::Node& node, size_t tasks, size_t task_bytes);

}  // namespace hbmsim::sim::sweep

#endif  // HBMSIM_SIM_SWEEP_SPEC_BOUNDS_H_
