// What every part of a sweep spec's reader shares: errors that name the
// spec's file and line, and paths relative to the spec's own folder.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sim::sweep {

// "FILE:LINE: WHAT", LINE being the node's (1 when yaml-cpp has no mark).
inline absl::Status SpecError(const std::string& file, const YAML::Node& node, const std::string& what) {
  const int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", file, line, what));
}

// A relative path in the spec is relative to the spec's own folder, so a
// spec and its recordings move together (a Slurm node's cwd is no concern).
inline std::string ResolveSpecPath(const std::string& folder, const std::string& path) {
  if (path.empty() || path[0] == '/' || folder.empty() || folder == ".") return path;
  return folder + "/" + path;
}

}  // namespace hbmsim::sim::sweep
