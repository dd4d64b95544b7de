#include "sim/sweep/sweep_spec.h"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>

#include "fmt/format.h"
#include "sim/config/device_presets.h"
#include "sim/config/yaml_guard.h"
#include "sim/layer.h"
#include "sim/sweep/spec_bounds.h"
#include "sim/sweep/spec_yaml.h"
#include "sim/sweep/sweep_scale.h"
#include "trace/core/numbers.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sim::sweep {
namespace {

// Keys a spec may have; anything else is a typo the user should hear about.
constexpr const char* kKeys[] = {"recordings", "allocators", "settings", "limits",
                                 "size",       "advise",     "device",   "scale"};

absl::Status Error(const std::string& file, const YAML::Node& node, const std::string& what) {
  return SpecError(file, node, what);
}

bool IsYamlFile(const std::string& name) {
  return name.size() > 5 && (name.ends_with(".yaml") || name.ends_with(".yml"));
}

// A list of scalars (a lone scalar counts as a list of one).
absl::StatusOr<std::vector<std::string>> Scalars(const std::string& file, const YAML::Node& node,
                                                 const std::string& key) {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    if (absl::Status s = CheckValueLength(file, node, key); !s.ok()) return s;
    return std::vector<std::string>{node.Scalar()};
  }
  if (!node.IsSequence()) return Error(file, node, fmt::format("{}: expected a list", key));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return Error(file, item, fmt::format("{}: expected a list of values", key));
    if (absl::Status s = CheckValueLength(file, item, key); !s.ok()) return s;
    out.push_back(item.Scalar());
  }
  if (out.empty()) return Error(file, node, fmt::format("{}: the list is empty", key));
  return out;
}

// The filesystem's expansion of a pattern: glob(3) sorts its matches; a
// pattern that is a plain path matches itself when the file exists.
std::vector<std::string> Glob(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> matches(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
  ::globfree(&g);
  return matches;
}

absl::StatusOr<std::vector<std::string>> ExpandRecordings(const std::string& file, const std::string& folder,
                                                          const YAML::Node& node,
                                                          const SweepSpecOptions& options) {
  absl::StatusOr<std::vector<std::string>> patterns = Scalars(file, node, "recordings");
  if (!patterns.ok()) return patterns.status();
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& pattern : *patterns) {
    const std::string resolved = ResolveSpecPath(folder, pattern);
    const std::vector<std::string> matches = options.expand ? options.expand(resolved) : Glob(resolved);
    if (matches.empty()) return Error(file, node, fmt::format("recordings: no file matches '{}'", pattern));
    for (const std::string& m : matches) {
      if (seen.insert(m).second) out.push_back(m);
    }
  }
  return out;
}

// Every combination of the grid's values, the last key varying fastest.
absl::StatusOr<std::vector<std::vector<std::pair<std::string, std::string>>>> SettingsGrid(
    const std::string& file, const YAML::Node& node, size_t max_tasks) {
  std::vector<std::vector<std::pair<std::string, std::string>>> combos(1);
  if (!node) return combos;
  if (!node.IsMap()) return Error(file, node, "settings: expected KEY: [values...]");
  // Every key and value is checked, and the grid counted, before any
  // combination is made: a grid past the cap costs nothing.
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  size_t count = 1;
  size_t combo_bytes = 0;  // the largest combination's strings
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
      return Error(file, entry.first, "settings: each key is an allocator option name");
    }
    if (absl::Status s = CheckValueLength(file, entry.first, "settings"); !s.ok()) return s;
    const std::string key = entry.first.Scalar();
    absl::StatusOr<std::vector<std::string>> values = Scalars(file, entry.second, "settings: " + key);
    if (!values.ok()) return values.status();
    if (count > max_tasks / values->size()) return TooManyTasks(file, node, max_tasks);
    count *= values->size();
    combo_bytes += 2 * sizeof(std::string) + key.size() + Longest(*values);
    axes.emplace_back(key, std::move(*values));
  }
  if (combo_bytes > kMaxSweepTaskBytes / count) return TooLargeTasks(file, node, count, combo_bytes);
  for (const auto& [key, values] : axes) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    next.reserve(combos.size() * values.size());
    for (const auto& combo : combos) {
      for (const std::string& v : values) {
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

// Each limit as `--bytes-limit` takes it (a size, a device preset, or auto), checked here so a
// typo is one error at the spec's line, not one failed task per recording.
absl::StatusOr<std::vector<std::string>> Limits(const std::string& file, const YAML::Node& node) {
  if (!node) return std::vector<std::string>{};
  absl::StatusOr<std::vector<std::string>> limits = Scalars(file, node, "limits");
  if (!limits.ok()) return limits.status();
  size_t i = 0;
  for (const std::string& limit : *limits) {
    const YAML::Node item = node.IsSequence() ? node[i++] : node;
    if (limit == "auto") continue;
    if (FindDevicePreset(limit) != nullptr) continue;
    if (absl::StatusOr<Bytes> b = ParseBytes(limit, /*allow_more_units=*/true); !b.ok()) {
      return Error(file, item, fmt::format("limits: {}", std::string(b.status().message())));
    }
  }
  return limits;
}

absl::StatusOr<std::string> Device(const std::string& file, const YAML::Node& node) {
  if (!node) return std::string();
  if (!node.IsScalar() || node.Scalar().empty()) return Error(file, node, "device: expected one device index");
  return node.Scalar();
}

absl::StatusOr<SweepSpec> Expand(const std::string& path, const YAML::Node& root, const SweepSpecOptions& options);

// `hbmsim scale --at V P... --allocator A --set ... [--device D] --to N | --fit-limit L [--step K]`.
std::vector<std::string> ScaleArgs(const SweepTask& t, const std::string& json_path) {
  std::vector<std::string> args = {"scale"};
  for (const auto& [value, path] : t.at) args.insert(args.end(), {"--at", value, path});
  args.insert(args.end(), {"--allocator", t.allocator});
  for (const auto& [key, value] : t.settings) args.insert(args.end(), {"--set", key + "=" + value});
  if (!t.device.empty()) args.insert(args.end(), {"--device", t.device});
  if (!t.to.empty()) args.insert(args.end(), {"--to", t.to});
  if (!t.bytes_limit.empty()) args.insert(args.end(), {"--fit-limit", t.bytes_limit});
  if (!t.step.empty()) args.insert(args.end(), {"--step", t.step});
  args.insert(args.end(), {"--json", json_path});
  return args;
}

}  // namespace

std::vector<std::string> SweepTask::Args(const std::string& json_path) const {
  if (question == "scale") return ScaleArgs(*this, json_path);
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
  const bool limited = question == "limit" || (question == "scale" && !bytes_limit.empty());
  key["bytes_limit"] = limited ? nlohmann::ordered_json(bytes_limit) : nlohmann::ordered_json();
  key["device"] = device.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(device);
  if (question == "scale") {  // only scale keys carry these, so other tasks' keys stay as they were
    key["to"] = to.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(to);
    key["step"] = step.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(step);
  }
  return key;
}

std::string SweepTask::FileName() const { return fmt::format("task-{:06}.json", index); }

absl::StatusOr<SweepSpec> LoadSweepSpec(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(
        fmt::format("cannot read {}: {}", path, std::strerror(errno != 0 ? errno : EIO)));
  std::string text;
  char buf[64 << 10];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxSweepSpecBytes) break;  // ParseSweepSpec reports it
  }
  if (in.bad())
    return absl::InvalidArgumentError(
        fmt::format("cannot read {}: {}", path, std::strerror(errno != 0 ? errno : EIO)));
  return ParseSweepSpec(text, path);
}

absl::StatusOr<SweepSpec> ParseSweepSpec(std::string_view text, const std::string& path,
                                         const SweepSpecOptions& options) {
  if (text.size() > kMaxSweepSpecBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: larger than {} bytes; not a sweep spec", path, kMaxSweepSpecBytes));
  }
  if (absl::Status s = CheckSpecItems(text, path); !s.ok()) return s;
  constexpr int kMaxNesting = 16;  // a spec is three levels deep
  if (int line = FirstTooDeepLine(text, kMaxNesting); line != 0) {
    return absl::InvalidArgumentError(fmt::format("{}:{}: nesting deeper than {} levels", path, line, kMaxNesting));
  }
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    return Expand(path, root, options);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
}

namespace {

// What a spec asks of each recording, and of the scale family.
struct Questions {
  std::vector<std::string> limits;
  bool size = false;
  bool advise = false;
  std::optional<ScaleQuestion> scale;
  size_t per_recording() const { return limits.size() + (size ? 1 : 0) + (advise ? 1 : 0); }
};

absl::StatusOr<Questions> ReadQuestions(const std::string& path, const std::string& folder,
                                        const YAML::Node& root, const SweepSpecOptions& options) {
  Questions q;
  absl::StatusOr<std::vector<std::string>> limits = Limits(path, root["limits"]);
  if (!limits.ok()) return limits.status();
  q.limits = *std::move(limits);
  absl::StatusOr<bool> size = Flag(path, root["size"], "size");
  absl::StatusOr<bool> advise = Flag(path, root["advise"], "advise");
  if (!size.ok()) return size.status();
  if (!advise.ok()) return advise.status();
  q.size = *size;
  q.advise = *advise;
  auto exists = [&](const std::string& p) { return !(options.expand ? options.expand(p) : Glob(p)).empty(); };
  absl::StatusOr<std::optional<ScaleQuestion>> scale =
      ParseScaleQuestion(path, folder, root["scale"], exists);
  if (!scale.ok()) return scale.status();
  q.scale = *std::move(scale);
  if (q.per_recording() == 0 && !q.scale) {
    return Error(path, root, "ask something: limits:, size: true, advise: true or scale:");
  }
  if (q.per_recording() == 0 && root["recordings"]) {
    return Error(path, root["recordings"], "recordings: no question asks them (limits:, size: or advise:)");
  }
  if (q.per_recording() > 0 && !root["recordings"]) return Error(path, root, "needs recordings:");
  return q;
}

void AddScaleTasks(const ScaleQuestion& q, const std::string& allocator,
                   const std::vector<std::pair<std::string, std::string>>& settings,
                   const std::string& device, SweepSpec& spec) {
  const std::string recording = ScaleRecordingText(q.at);
  for (const std::string& to : q.to) {
    spec.tasks.push_back(
        {spec.tasks.size(), recording, allocator, settings, "scale", "", device, q.at, to, ""});
  }
  for (const std::string& limit : q.fit_limits) {
    spec.tasks.push_back(
        {spec.tasks.size(), recording, allocator, settings, "scale", limit, device, q.at, "", q.step});
  }
}

// A map of known keys, allocators: among them.
absl::Status CheckSpecKeys(const std::string& path, const YAML::Node& root) {
  if (!root.IsMap()) return Error(path, root, "a sweep spec is a map (recordings:, allocators:, ...)");
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return Error(path, entry.first,
                   fmt::format("unknown key '{}' (recordings, allocators, settings, limits, "
                               "size, advise, device, scale)",
                               key));
    }
  }
  if (!root["allocators"]) return Error(path, root, "needs allocators:");
  return absl::OkStatus();
}

// The tasks of each recording: every allocator and settings row, at each
// limit, and sized and advised when asked.
void AddRecordingTasks(const std::vector<std::string>& recordings, const std::vector<std::string>& allocators,
                       const std::string& folder,
                       const std::vector<std::vector<std::pair<std::string, std::string>>>& grid,
                       const Questions& questions, const std::string& device, SweepSpec& spec) {
  for (const std::string& recording : recordings) {
    for (const std::string& a : allocators) {
      const std::string allocator = IsYamlFile(a) ? ResolveSpecPath(folder, a) : a;
      for (const auto& settings : grid) {
        auto add = [&](std::string question, std::string limit) {
          spec.tasks.push_back({spec.tasks.size(),
                                recording,
                                allocator,
                                settings,
                                std::move(question),
                                std::move(limit),
                                device,
                                {},
                                "",
                                ""});
        };
        for (const std::string& limit : questions.limits) add("limit", limit);
        if (questions.size) add("size", "");
        if (questions.advise) add("advise", "");
      }
    }
  }
}

absl::StatusOr<SweepSpec> Expand(const std::string& path, const YAML::Node& root, const SweepSpecOptions& options) {
  if (absl::Status s = CheckSpecKeys(path, root); !s.ok()) return s;
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash);
  absl::StatusOr<std::vector<std::string>> allocators = Scalars(path, root["allocators"], "allocators");
  if (!allocators.ok()) return allocators.status();
  auto grid = SettingsGrid(path, root["settings"], options.max_tasks);
  if (!grid.ok()) return grid.status();
  absl::StatusOr<Questions> questions = ReadQuestions(path, folder, root, options);
  if (!questions.ok()) return questions.status();
  absl::StatusOr<std::string> device = Device(path, root["device"]);
  if (!device.ok()) return device.status();
  // The recordings last: a spec with a typo elsewhere fails before any glob runs.
  absl::StatusOr<std::vector<std::string>> recordings =
      root["recordings"] ? ExpandRecordings(path, folder, root["recordings"], options)
                         : absl::StatusOr<std::vector<std::string>>(std::vector<std::string>{});
  if (!recordings.ok()) return recordings.status();
  const TaskCounts counts{recordings->size(), allocators->size(), grid->size(), questions->per_recording(),
                          questions->scale ? questions->scale->tasks_per_configuration() : 0};
  if (absl::Status s = CheckTaskCount(path, root, counts, options.max_tasks,
                                  LargestTaskBytes(folder, *recordings, *allocators, *grid, questions->limits,
                                                   questions->scale, *device));
      !s.ok()) {
    return s;
  }
  SweepSpec spec{path, {}};
  AddRecordingTasks(*recordings, *allocators, folder, *grid, *questions, *device, spec);
  if (!questions->scale) return spec;
  for (const std::string& a : *allocators) {
    for (const auto& settings : *grid) {
      AddScaleTasks(*questions->scale, IsYamlFile(a) ? ResolveSpecPath(folder, a) : a, settings, *device, spec);
    }
  }
  return spec;
}

}  // namespace

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

}  // namespace hbmsim::sim::sweep
