#include "sim/sweep/spec_bounds.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "fmt/format.h"
#include "sim/sweep/spec_yaml.h"
#include "sim/sweep/sweep_spec.h"

namespace hbmsim::sim::sweep {

absl::Status CheckSpecItems(std::string_view text, const std::string& path) {
  const size_t items = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) +
                       static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  if (items <= kMaxSweepSpecItems) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("{}: {} items (commas and lines), more than the {} a sweep spec may hold; split it into "
                  "several specs, or match recordings with a pattern",
                  path, items, kMaxSweepSpecItems));
}

size_t TaskBytes(size_t recording, size_t allocator,
                 const std::vector<std::pair<std::string, std::string>>& settings, size_t limit,
                 size_t device) {
  size_t bytes = sizeof(SweepTask) + recording + allocator + limit + device;
  for (const auto& [key, value] : settings) bytes += sizeof(key) + sizeof(value) + key.size() + value.size();
  return bytes;
}

size_t LargestTaskBytes(const std::string& folder, const std::vector<std::string>& recordings,
                        const std::vector<std::string>& allocators,
                        const std::vector<std::vector<std::pair<std::string, std::string>>>& grid,
                        const std::vector<std::string>& limits, const std::optional<ScaleQuestion>& scale,
                        const std::string& device) {
  size_t settings = 0, largest = 0;
  for (size_t i = 0; i < grid.size(); ++i) {
    const size_t bytes = TaskBytes(0, 0, grid[i], 0, 0);
    if (bytes > largest) {
      largest = bytes;
      settings = i;
    }
  }
  size_t scale_bytes = 0;
  if (scale) {
    for (const auto& [value, path] : scale->at) {
      scale_bytes += 2 * (2 * sizeof(std::string) + value.size() + path.size());
    }
    scale_bytes += std::max(Longest(scale->to), Longest(scale->fit_limits)) + scale->step.size();
  }
  const std::vector<std::pair<std::string, std::string>> none;
  return TaskBytes(Longest(recordings) + scale_bytes, folder.size() + 1 + Longest(allocators),
                   grid.empty() ? none : grid[settings], Longest(limits), device.size());
}

size_t Longest(const std::vector<std::string>& values) {
  size_t longest = 0;
  for (const std::string& v : values) longest = std::max(longest, v.size());
  return longest;
}

absl::Status CheckTaskCount(const std::string& file, const YAML::Node& node, const TaskCounts& counts,
                            size_t max_tasks, size_t task_bytes) {
  // nullopt past the cap; each factor is checked before it multiplies.
  auto product = [&](std::initializer_list<size_t> factors) -> std::optional<size_t> {
    size_t total = 1;
    for (size_t f : factors) {
      if (f > max_tasks || (f > 0 && total > max_tasks / f)) return std::nullopt;
      total *= f;
    }
    return total;
  };
  const std::optional<size_t> each =
      product({counts.recordings, counts.allocators, counts.settings, counts.per_recording});
  const std::optional<size_t> scale = product({counts.allocators, counts.settings, counts.scale_per_configuration});
  if (!each || !scale || *each > max_tasks - *scale) return TooManyTasks(file, node, max_tasks);
  if (task_bytes > kMaxSweepTaskBytes / std::max<size_t>(1, *each + *scale)) {
    return TooLargeTasks(file, node, *each + *scale, task_bytes);
  }
  return absl::OkStatus();
}

absl::Status CheckValueLength(const std::string& file, const YAML::Node& scalar, const std::string& key) {
  if (scalar.Scalar().size() <= kMaxSweepValueBytes) return absl::OkStatus();
  return SpecError(
      file, scalar,
      fmt::format("{}: a value of {} bytes; at most {}", key, scalar.Scalar().size(), kMaxSweepValueBytes));
}

absl::Status TooManyTasks(const std::string& file, const YAML::Node& node, size_t max_tasks) {
  return SpecError(file, node,
                   fmt::format("the sweep expands to more than {} tasks; split it into several specs", max_tasks));
}

absl::Status TooLargeTasks(const std::string& file, const YAML::Node& node, size_t tasks, size_t task_bytes) {
  return SpecError(file, node,
                   fmt::format("the sweep's {} tasks of up to {} bytes each would hold more than {} bytes; shorten "
                               "its values or split it into several specs",
                               tasks, task_bytes, kMaxSweepTaskBytes));
}

}  // namespace hbmsim::sim::sweep
