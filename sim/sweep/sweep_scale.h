// The `scale:` question of a sweep spec: one job's recordings at a few sizes
// (`hbmsim scale`, docs/scale.md), asked under every allocator and settings
// combination of the spec, once per `to:` value and once per `fit_limits:`
// limit:
//
//   scale:
//     at: {128: fam/ctx128.pickle, 256: fam/ctx256.pickle}   # two or more
//     to: [1024, 2048]                                        } at least one
//     fit_limits: [80GiB]                                     }
//     step: 64                                                # optional, for fit_limits
//
// Paths are relative to the spec's folder, like recordings'.
#ifndef HBMSIM_SIM_SWEEP_SWEEP_SCALE_H_
#define HBMSIM_SIM_SWEEP_SWEEP_SCALE_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sim::sweep {

struct ScaleQuestion {
  std::vector<std::pair<std::string, std::string>> at;  // (value, path), in spec order
  std::vector<std::string> to;
  std::vector<std::string> fit_limits;
  std::string step;  // "" when not given

  size_t tasks_per_configuration() const { return to.size() + fit_limits.size(); }
};

// nullopt when the spec has no `scale:`. `exists` says whether a path names
// a file (the spec reader's expander). Errors name the file and line.
absl::StatusOr<std::optional<ScaleQuestion>> ParseScaleQuestion(
    const std::string& file, const std::string& folder, const YAML::Node& node,
    const std::function<bool(const std::string& path)>& exists);

// "128=fam/ctx128.pickle 256=fam/ctx256.pickle": the task's recording in its key.
std::string ScaleRecordingText(const std::vector<std::pair<std::string, std::string>>& at);

}  // namespace hbmsim::sim::sweep

#endif  // HBMSIM_SIM_SWEEP_SWEEP_SCALE_H_
