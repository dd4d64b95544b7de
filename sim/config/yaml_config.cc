// Strict YAML loading for allocator configs (see allocator_config.h).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fmt/format.h"
#include "sim/config/allocator_config.h"
#include "sim/config/yaml_guard.h"
#include "sim/layer.h"
#include "trace/core/numbers.h"
#include "yaml-cpp/yaml.h"

namespace hbmsim::sim {
namespace {

absl::Status Error(const std::string& file, int line, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}:{}: {}", file, line, what));
}

int LineOf(const YAML::Node& n) { return n.Mark().line + 1; }

absl::StatusOr<std::string> ScalarText(const YAML::Node& value, const std::string& file,
                                       std::string_view path) {
  if (!value.IsScalar()) return Error(file, LineOf(value), fmt::format("{}: expected a single value", path));
  return value.Scalar();
}

absl::Status ApplyYamlOption(AllocatorConfig& config, const YAML::Node& key, const YAML::Node& value,
                             const std::string& file) {
  const std::string name = key.Scalar();
  const std::string path = fmt::format("allocator.{}", name);
  if (name == "impl") return absl::OkStatus();
  const OptionSpec* spec = config.policy->FindOption(name);
  if (spec == nullptr && name != "bytes_limit") {
    return Error(file, LineOf(key),
                 fmt::format("{}: unknown option for {} (known: {})", path, config.policy->name,
                             config.policy->KnownOptions()));
  }
  absl::StatusOr<std::string> text = ScalarText(value, file, path);
  if (!text.ok()) return text.status();
  if (spec == nullptr) {
    absl::StatusOr<Bytes> b = ParseBytes(*text, /*allow_more_units=*/true);
    if (!b.ok())
      return Error(file, LineOf(value), fmt::format("{}: {}", path, std::string(b.status().message())));
    config.bytes_limit = *b;
    return absl::OkStatus();
  }
  absl::StatusOr<OptionValue> v = ParseOptionValue(*spec, *text);
  if (!v.ok())
    return Error(file, LineOf(value), fmt::format("{}: {}", path, std::string(v.status().message())));
  config.options.Set(name, *std::move(v));
  return absl::OkStatus();
}

// Keys must be plain scalars and appear once (yaml-cpp keeps duplicates silently).
absl::Status CheckKeys(const YAML::Node& map, const std::string& file, std::string_view prefix) {
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar())
      return Error(file, LineOf(kv.first), fmt::format("{}: keys must be names", prefix));
    if (!seen.insert(kv.first.Scalar()).second) {
      return Error(file, LineOf(kv.first), fmt::format("{}{}: duplicate key", prefix, kv.first.Scalar()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AllocatorConfig> ParseAllocatorNode(const PolicyRegistry& registry, const YAML::Node& key,
                                                   const YAML::Node& node, const std::string& file) {
  if (!node.IsMap()) return Error(file, LineOf(key), "allocator: expected a mapping with impl: and options");
  if (absl::Status s = CheckKeys(node, file, "allocator."); !s.ok()) return s;
  const YAML::Node impl = node["impl"];
  if (!impl)
    return Error(file, LineOf(key), fmt::format("allocator: missing impl (built-in: {})", registry.Names()));
  absl::StatusOr<std::string> name = ScalarText(impl, file, "allocator.impl");
  if (!name.ok()) return name.status();
  const PolicySpec* policy = registry.Find(*name);
  if (policy == nullptr) {
    return Error(
        file, LineOf(impl),
        fmt::format("allocator.impl: unknown allocator '{}' (built-in: {})", *name, registry.Names()));
  }
  AllocatorConfig config = DefaultConfig(*policy);
  config.source = file;
  for (const auto& kv : node) {
    if (absl::Status s = ApplyYamlOption(config, kv.first, kv.second, file); !s.ok()) return s;
  }
  return config;
}

}  // namespace

absl::StatusOr<AllocatorConfig> ParseAllocatorConfig(const PolicyRegistry& registry, std::string_view text,
                                                     const std::string& name) {
  if (text.size() > kMaxConfigFileBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: larger than {} bytes; not an allocator config", name, kMaxConfigFileBytes));
  }
  if (int line = FirstTooDeepLine(text, kMaxConfigNesting); line != 0) {
    return Error(name, line, fmt::format("nesting deeper than {} levels", kMaxConfigNesting));
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error(name, e.mark.line + 1, fmt::format("malformed YAML: {}", e.msg));
  }
  // `{}` is a mapping too, but an empty one: there is no allocator: entry to read.
  if (!root.IsMap() || root.size() == 0) {
    return Error(name, 1, "expected a mapping with an allocator: key");
  }
  if (absl::Status s = CheckKeys(root, name, ""); !s.ok()) return s;
  for (const auto& kv : root) {
    if (kv.first.Scalar() != "allocator") {
      return Error(name, LineOf(kv.first),
                   fmt::format("{}: unknown key (known: allocator)", kv.first.Scalar()));
    }
  }
  return ParseAllocatorNode(registry, root.begin()->first, root.begin()->second, name);
}

namespace {

std::string Reason(int err) { return std::strerror(err != 0 ? err : EIO); }

}  // namespace

absl::StatusOr<AllocatorConfig> LoadAllocatorConfigFile(const PolicyRegistry& registry,
                                                        const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return absl::InvalidArgumentError(fmt::format("{} is a directory", path));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  // libstdc++ opens with open(2), so errno holds the reason (ENOENT, EACCES).
  if (!in)
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot open allocator config: {}", path, Reason(errno)));
  std::string text;
  char buf[64 << 10];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigFileBytes) break;  // ParseAllocatorConfig reports it
  }
  if (in.bad())
    return absl::InvalidArgumentError(
        fmt::format("{}: cannot read allocator config: {}", path, Reason(errno)));
  return ParseAllocatorConfig(registry, text, path);
}

}  // namespace hbmsim::sim
