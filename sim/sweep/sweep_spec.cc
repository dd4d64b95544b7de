#include "sim/sweep/sweep_spec.h"

#include <glob.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sweep {
namespace {

// Keys a spec may have; anything else is a typo the user should hear about.
constexpr const char* kKeys[] = {"recordings", "allocators", "settings", "limits", "size", "advise", "device"};

absl::Status Error(const std::string& file, const YAML::Node& node, const std::string& what) {
  const int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", file, line, what));
}

// A relative path in the spec is relative to the spec's own folder, so a
// spec and its recordings move together (a Slurm node's cwd is no concern).
std::string Resolve(const std::string& folder, const std::string& path) {
  if (path.empty() || path[0] == '/' || folder.empty() || folder == ".") return path;
  return folder + "/" + path;
}

bool IsYamlFile(const std::string& name) {
  return name.size() > 5 && (name.ends_with(".yaml") || name.ends_with(".yml"));
}

// A list of scalars (a lone scalar counts as a list of one).
absl::StatusOr<std::vector<std::string>> Scalars(const std::string& file, const YAML::Node& node,
                                                 const std::string& key) {
  std::vector<std::string> out;
  if (node.IsScalar()) return std::vector<std::string>{node.Scalar()};
  if (!node.IsSequence()) return Error(file, node, fmt::format("{}: expected a list", key));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return Error(file, item, fmt::format("{}: expected a list of values", key));
    out.push_back(item.Scalar());
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ExpandRecordings(const std::string& file, const std::string& folder,
                                                          const YAML::Node& node) {
  absl::StatusOr<std::vector<std::string>> patterns = Scalars(file, node, "recordings");
  if (!patterns.ok()) return patterns.status();
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& pattern : *patterns) {
    const std::string resolved = Resolve(folder, pattern);
    glob_t g{};
    const int rc = ::glob(resolved.c_str(), 0, nullptr, &g);  // glob sorts its matches
    std::vector<std::string> matches(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
    ::globfree(&g);
    if (matches.empty()) return Error(file, node, fmt::format("recordings: no file matches '{}'", pattern));
    for (const std::string& m : matches) {
      if (seen.insert(m).second) out.push_back(m);
    }
  }
  return out;
}

// Every combination of the grid's values, the last key varying fastest.
absl::StatusOr<std::vector<std::vector<std::pair<std::string, std::string>>>> SettingsGrid(
    const std::string& file, const YAML::Node& node) {
  std::vector<std::vector<std::pair<std::string, std::string>>> combos(1);
  if (!node) return combos;
  if (!node.IsMap()) return Error(file, node, "settings: expected KEY: [values...]");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    absl::StatusOr<std::vector<std::string>> values = Scalars(file, entry.second, "settings: " + key);
    if (!values.ok()) return values.status();
    if (values->empty()) return Error(file, entry.second, fmt::format("settings: {}: no values", key));
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& combo : combos) {
      for (const std::string& v : *values) {
        next.push_back(combo);
        next.back().emplace_back(key, v);
      }
    }
    combos = std::move(next);
  }
  return combos;
}

absl::StatusOr<bool> Flag(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (!node) return false;
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    return Error(file, node, fmt::format("{}: expected true or false", key));
  }
  return value;
}

}  // namespace

std::vector<std::string> SweepTask::Args(const std::string& json_path) const {
  std::vector<std::string> args;
  if (question == "limit") {
    args = {"replay", recording, "--allocator", allocator, "--bytes-limit", bytes_limit, "--no-advice", "--quiet"};
  } else {
    args = {question, recording, "--allocator", allocator};
  }
  for (const auto& [key, value] : settings) args.insert(args.end(), {"--set", key + "=" + value});
  if (!device.empty()) args.insert(args.end(), {"--device", device});
  if (question != "limit") args.insert(args.end(), {"--jobs", "1"});
  args.insert(args.end(), {"--json", json_path});
  return args;
}

std::string SweepTask::SettingsText() const {
  std::string out;
  for (const auto& [key, value] : settings) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, value);
  return out;
}

nlohmann::ordered_json SweepTask::Key() const {
  nlohmann::ordered_json key;
  key["task"] = index;
  key["recording"] = recording;
  key["allocator"] = allocator;
  key["settings"] = SettingsText();
  key["question"] = question;
  key["bytes_limit"] = question == "limit" ? nlohmann::ordered_json(bytes_limit) : nlohmann::ordered_json();
  key["device"] = device.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(device);
  return key;
}

std::string SweepTask::FileName() const { return fmt::format("task-{:06}.json", index); }

absl::StatusOr<SweepSpec> LoadSweepSpec(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return absl::InvalidArgumentError(fmt::format("cannot read {}", path));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return Error(path, root, "a sweep spec is a map (recordings:, allocators:, ...)");
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return Error(path, entry.first, fmt::format("unknown key '{}' (recordings, allocators, settings, limits, "
                                                  "size, advise, device)", key));
    }
  }
  if (!root["recordings"] || !root["allocators"]) return Error(path, root, "needs recordings: and allocators:");
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash);
  absl::StatusOr<std::vector<std::string>> recordings = ExpandRecordings(path, folder, root["recordings"]);
  if (!recordings.ok()) return recordings.status();
  absl::StatusOr<std::vector<std::string>> allocators = Scalars(path, root["allocators"], "allocators");
  if (!allocators.ok()) return allocators.status();
  auto grid = SettingsGrid(path, root["settings"]);
  if (!grid.ok()) return grid.status();
  std::vector<std::string> limits;
  if (root["limits"]) {
    absl::StatusOr<std::vector<std::string>> l = Scalars(path, root["limits"], "limits");
    if (!l.ok()) return l.status();
    limits = *l;
  }
  absl::StatusOr<bool> size = Flag(path, root["size"], "size");
  absl::StatusOr<bool> advise = Flag(path, root["advise"], "advise");
  if (!size.ok()) return size.status();
  if (!advise.ok()) return advise.status();
  if (limits.empty() && !*size && !*advise) return Error(path, root, "ask something: limits:, size: true or advise: true");
  const std::string device = root["device"] && root["device"].IsScalar() ? root["device"].Scalar() : "";
  SweepSpec spec{path, {}};
  for (const std::string& recording : *recordings) {
    for (const std::string& a : *allocators) {
      const std::string allocator = IsYamlFile(a) ? Resolve(folder, a) : a;
      for (const auto& settings : *grid) {
        auto add = [&](std::string question, std::string limit) {
          spec.tasks.push_back({spec.tasks.size(), recording, allocator, settings, std::move(question),
                                std::move(limit), device});
        };
        for (const std::string& limit : limits) add("limit", limit);
        if (*size) add("size", "");
        if (*advise) add("advise", "");
      }
    }
  }
  return spec;
}

absl::StatusOr<std::pair<size_t, size_t>> ParseShard(const std::string& text) {
  size_t i = 0, n = 0;
  char slash = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%zu%c%zu%n", &i, &slash, &n, &consumed) != 3 || slash != '/' ||
      consumed != static_cast<int>(text.size()) || n == 0 || i >= n) {
    return absl::InvalidArgumentError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text));
  }
  return std::make_pair(i, n);
}

}  // namespace hbmsim::sweep
