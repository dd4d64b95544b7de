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

namespace hbmsim::sweep {

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

}  // namespace hbmsim::sweep

#endif  // HBMSIM_SIM_SWEEP_SPEC_BOUNDS_H_
