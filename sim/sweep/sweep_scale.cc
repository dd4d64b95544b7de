#include "sim/sweep/sweep_scale.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/sweep/spec_yaml.h"
#include "trace/core/numbers.h"

namespace hbmsim::sim::sweep {
namespace {

absl::Status ScaleError(const std::string& file, const YAML::Node& node, const std::string& what) {
  return SpecError(file, node, "scale: " + what);
}

bool PositiveInteger(const std::string& text) {
  absl::StatusOr<uint64_t> v = ParseU64(text);
  return v.ok() && *v > 0;
}

// A scalar or a list of scalars, each checked by `valid`.
absl::StatusOr<std::vector<std::string>> Values(
    const std::string& file, const YAML::Node& node, const std::string& key,
    const std::function<std::string(const std::string&)>& invalid) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsScalar() && !node.IsSequence())
    return ScaleError(file, node, fmt::format("{}: expected a list", key));
  std::vector<YAML::Node> items;
  if (node.IsScalar()) items.push_back(node);
  for (const YAML::Node& item : node) items.push_back(item);
  for (const YAML::Node& item : items) {
    if (!item.IsScalar()) return ScaleError(file, item, fmt::format("{}: expected a list of values", key));
    if (std::string why = invalid(item.Scalar()); !why.empty()) {
      return ScaleError(file, item, fmt::format("{}: {}", key, why));
    }
    out.push_back(item.Scalar());
  }
  if (out.empty()) return ScaleError(file, node, fmt::format("{}: the list is empty", key));
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> At(
    const std::string& file, const std::string& folder, const YAML::Node& node,
    const std::function<bool(const std::string& path)>& exists) {
  if (!node.IsMap()) return ScaleError(file, node, "at: expected VALUE: RECORDING, two or more");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || !PositiveInteger(entry.first.Scalar())) {
      return ScaleError(file, entry.first,
                   "at: each key is a positive integer (the size the recording was made at)");
    }
    if (!entry.second.IsScalar() || entry.second.Scalar().empty()) {
      return ScaleError(file, entry.second, "at: each value is a recording's path");
    }
    const std::string path = ResolveSpecPath(folder, entry.second.Scalar());
    if (!exists(path))
      return ScaleError(file, entry.second, fmt::format("at: no file '{}'", entry.second.Scalar()));
    out.emplace_back(entry.first.Scalar(), path);
  }
  if (out.size() < 2) return ScaleError(file, node, "at: give two recordings or more");
  return out;
}

}  // namespace

absl::StatusOr<std::optional<ScaleQuestion>> ParseScaleQuestion(
    const std::string& file, const std::string& folder, const YAML::Node& node,
    const std::function<bool(const std::string& path)>& exists) {
  if (!node) return std::nullopt;
  if (!node.IsMap()) return ScaleError(file, node, "expected at:, to:, fit_limits:, step:");
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (key != "at" && key != "to" && key != "fit_limits" && key != "step") {
      return ScaleError(file, entry.first, fmt::format("unknown key '{}' (at, to, fit_limits, step)", key));
    }
  }
  ScaleQuestion q;
  auto integer = [](const std::string& v) { return PositiveInteger(v) ? "" : "expected a positive integer"; };
  auto limit = [](const std::string& v) {
    absl::StatusOr<Bytes> b = ParseBytes(v, /*allow_more_units=*/true);
    return b.ok() ? std::string() : std::string(b.status().message());
  };
  absl::StatusOr<std::vector<std::string>> to = Values(file, node["to"], "to", integer);
  if (!to.ok()) return to.status();
  absl::StatusOr<std::vector<std::string>> limits = Values(file, node["fit_limits"], "fit_limits", limit);
  if (!limits.ok()) return limits.status();
  absl::StatusOr<std::vector<std::string>> step = Values(file, node["step"], "step", integer);
  if (!step.ok()) return step.status();
  if (step->size() > 1) return ScaleError(file, node["step"], "step: expected one value");
  if (to->empty() && limits->empty()) return ScaleError(file, node, "ask something: to: or fit_limits:");
  if (!node["at"]) return ScaleError(file, node, "at: expected VALUE: RECORDING, two or more");
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> at = At(file, folder, node["at"], exists);
  if (!at.ok()) return at.status();
  q.at = *std::move(at);
  q.to = *std::move(to);
  q.fit_limits = *std::move(limits);
  q.step = step->empty() ? "" : step->front();
  return q;
}

std::string ScaleRecordingText(const std::vector<std::pair<std::string, std::string>>& at) {
  std::string out;
  for (const auto& [value, path] : at) out += fmt::format("{}{}={}", out.empty() ? "" : " ", value, path);
  return out;
}

}  // namespace hbmsim::sim::sweep
