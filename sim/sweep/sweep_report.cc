#include "sim/sweep/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/json_text.h"

namespace hbmsim::sim::sweep {
namespace {

using Json = nlohmann::ordered_json;

std::string Opt(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "-"; }

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(v.size() - 1) / 2];
}

// The lines of DIR in file-name order (hence task order).
absl::StatusOr<std::vector<Json>> ReadLines(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> files = ResultFiles(dir);
  if (!files.ok()) return files.status();
  std::vector<Json> lines;
  for (const std::string& path : *files) {
    std::optional<Json> line = ReadResultLine(path);
    if (!line) return absl::InvalidArgumentError(fmt::format("{}: not a sweep result line", path));
    lines.push_back(*std::move(line));
  }
  if (lines.empty()) return absl::InvalidArgumentError(fmt::format("{}: no task-*.json results", dir));
  return lines;
}

// `object[key]`, or null when there is no such key: a const operator[] of a
// missing key is undefined behaviour in nlohmann::json, and result files are
// the user's to edit.
const Json& Field(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// `object[key]` when it is `true`; false for false, null (advise on a
// recording with no limit writes "fits_at_limit": null), absent or any other
// value, so a result line never makes the report throw.
bool IsTrue(const Json& object, const char* key) {
  if (!object.is_object()) return false;
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string Text(const Json& v) {
  return v.is_string() ? v.get<std::string>() : (v.is_null() ? "" : JsonText(v));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ResultFiles(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("task-") && name.ends_with(".json")) names.push_back(name);
  }
  if (ec) return absl::InvalidArgumentError(fmt::format("cannot read {}: {}", dir, ec.message()));
  std::sort(names.begin(), names.end());
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back(dir + "/" + name);
  return paths;
}

std::optional<Json> ReadResultLine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Json line = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!line.is_object() || !line.contains("key") || !line["key"].is_object() || !line.contains("exit_code") ||
      !line["exit_code"].is_number_integer()) {
    return std::nullopt;
  }
  return line;
}

Json CompactResult(const std::string& question, Json report) {
  if (question == "limit") {
    Json out;
    for (const char* key : {"verdict", "summary", "peak_live_bytes", "stats"}) {
      if (report.contains(key)) out[key] = report[key];
    }
    return out;
  }
  if (question == "size") report.erase("trials");
  return report;
}

std::optional<uint64_t> SummaryRow::NearestRank(std::vector<uint64_t> v, double p) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

namespace {

using SummaryRowKey = std::tuple<std::string, std::string, std::string, std::string>;

// A size row's savings are against today's min limit per (allocator,
// recording): the allocator's first settings row.
struct TodayLimits {
  std::map<std::pair<std::string, std::string>, uint64_t> need;
  std::map<std::string, std::string> first_settings;  // allocator -> its first size row's settings
};

// The row of a result line: (allocator, settings, question, limit), added on its first line.
SummaryRow& SummaryRowOf(const Json& key, std::map<SummaryRowKey, size_t>& row_of, SweepSummary& s) {
  // A scale task at one size is its own row, named by the size.
  const std::string to = key.contains("to") && !Field(key, "to").is_null() ? "to=" + Text(Field(key, "to")) : "";
  const SummaryRowKey id =
      std::make_tuple(Text(Field(key, "allocator")), Text(Field(key, "settings")), Text(Field(key, "question")),
                      to.empty() ? Text(Field(key, "bytes_limit")) : to);
  auto [it, added] = row_of.emplace(id, s.rows.size());
  if (added) {
    SummaryRow row;
    std::tie(row.allocator, row.settings, row.question, row.bytes_limit) = id;
    s.rows.push_back(std::move(row));
  }
  return s.rows[it->second];
}

void AddSizeResult(const Json& key, const Json& result, TodayLimits& today, SummaryRow& row) {
  if (!result.contains("min_bytes_limit") || !result["min_bytes_limit"].is_number()) {
    ++row.failed;
    return;
  }
  ++row.fit;
  const uint64_t need = result["min_bytes_limit"].get<uint64_t>();
  row.needed.push_back(need);
  if (const Json fresh = result.value("fresh_start", Json());
      fresh.is_object() && fresh["min_bytes_limit"].is_number()) {
    row.needed_fresh.push_back(fresh["min_bytes_limit"].get<uint64_t>());
  }
  const std::string recording = Text(Field(key, "recording"));
  today.first_settings.emplace(row.allocator, row.settings);
  if (today.first_settings[row.allocator] == row.settings) today.need[{row.allocator, recording}] = need;
  if (auto t = today.need.find({row.allocator, recording}); t != today.need.end()) {
    row.savings.push_back(static_cast<int64_t>(t->second) - static_cast<int64_t>(need));
  }
}

void AddScaleResult(const Json& result, int code, SummaryRow& row) {
  ++(code == 0 ? row.fit : row.failed);
  // At a size: the prediction's reserved peak; under a fit limit: the largest size that fits.
  const Json& answer = result.contains("largest_fitting") ? result["largest_fitting"] : Json();
  if (Field(answer, "to").is_number()) {
    row.needed.push_back(Field(answer, "to").get<uint64_t>());
  } else if (result.contains("peak_reserved_bytes") && result["peak_reserved_bytes"].is_number()) {
    row.needed.push_back(result["peak_reserved_bytes"].get<uint64_t>());
  }
}

// An advise task "fits" when today fails and some candidate fits.
void AddAdviseResult(const Json& result, SummaryRow& row) {
  const bool today_fits = result.contains("today") && IsTrue(result["today"], "fits_at_limit");
  bool some_fits = false;
  const Json& candidates = result.contains("candidates") ? result["candidates"] : Json();
  if (candidates.is_array()) {
    for (const Json& c : candidates) some_fits |= IsTrue(c, "fits_at_limit");
  }
  ++((!today_fits && some_fits) ? row.fit : row.failed);
}

}  // namespace

absl::StatusOr<SweepSummary> SummarizeResults(const std::string& dir) {
  absl::StatusOr<std::vector<Json>> lines = ReadLines(dir);
  if (!lines.ok()) return lines.status();
  SweepSummary s{dir, static_cast<int>(lines->size()), {}};
  std::map<SummaryRowKey, size_t> row_of;
  TodayLimits today;
  for (const Json& line : *lines) {
    const Json& key = line["key"];
    SummaryRow& row = SummaryRowOf(key, row_of, s);
    ++row.jobs;
    const int code = line["exit_code"].get<int>();
    const Json& result = line.value("result", Json());
    if (code >= 2 || result.is_null()) {
      ++row.errors;
      continue;
    }
    if (row.question == "limit") {
      ++(code == 0 ? row.fit : row.failed);
    } else if (row.question == "size") {
      AddSizeResult(key, result, today, row);
    } else if (row.question == "scale") {
      AddScaleResult(result, code, row);
    } else if (row.question == "advise") {
      AddAdviseResult(result, row);
    }
  }
  return s;
}

namespace {

// The size rows' answers from a fresh start, for the recordings that began
// warm: the table above answers for those processes with their caches.
std::string FreshStartText(const SweepSummary& s) {
  std::string out;
  for (const SummaryRow& r : s.rows) {
    if (r.needed_fresh.empty()) continue;
    out += fmt::format("{:<10} {:<44} {:>5} {:>14} {:>14} {:>14}\n", r.allocator,
                       r.settings.empty() ? "(as configured)" : r.settings, r.needed_fresh.size(),
                       Opt(r.FreshPercentile(0.5)), Opt(r.FreshPercentile(0.9)), Opt(r.FreshPercentile(1.0)));
  }
  if (out.empty()) return "";
  return fmt::format(
             "\nFrom a fresh start (size rows of the recordings that began with memory reserved; need_* "
             "above is each process with its cache as recorded, these a new run, --start-state place):\n"
             "{:<10} {:<44} {:>5} {:>14} {:>14} {:>14}\n",
             "allocator", "settings", "warm", "need_median", "need_p90", "need_max") +
         out;
}

}  // namespace

std::string SummaryText(const SweepSummary& s) {
  std::string out = fmt::format("hbmsim sweep report {}: {} task results\n\n", s.dir, s.lines);
  out += fmt::format("{:<10} {:<44} {:<7} {:>12} {:>5} {:>5} {:>6} {:>6} {:>14} {:>14} {:>14} {:>14}\n",
                     "allocator", "settings", "asks", "limit", "jobs", "fit", "failed", "errors", "need_median",
                     "need_p90", "need_max", "saving_median");
  for (const SummaryRow& r : s.rows) {
    out += fmt::format("{:<10} {:<44} {:<7} {:>12} {:>5} {:>5} {:>6} {:>6} {:>14} {:>14} {:>14} {:>14}\n",
                       r.allocator, r.settings.empty() ? "(as configured)" : r.settings, r.question,
                       r.bytes_limit.empty() ? "-" : r.bytes_limit, r.jobs, r.fit, r.failed, r.errors,
                       Opt(r.Percentile(0.5)), Opt(r.Percentile(0.9)), Opt(r.Percentile(1.0)),
                       r.savings.empty() ? "-" : std::to_string(Median(r.savings)));
  }
  out += "\nfit: limit rows, fits at the limit; size rows, a fitting limit was found; advise rows, some setting "
         "fits where today's does not. need_*: min_bytes_limit over the recordings (nearest rank); saving: "
         "today's (the allocator's first settings) need minus this one, per recording, bytes.\n";
  out += FreshStartText(s);
  if (std::any_of(s.rows.begin(), s.rows.end(), [](const SummaryRow& r) { return r.question == "scale"; })) {
    out +=
        "scale rows: fit, the prediction fits (to=N) or some size fits the limit; need_*: the prediction's "
        "peak reserved bytes (to=N), or the largest size that fits the limit.\n";
  }
  return out;
}

std::string SummaryCsv(const SweepSummary& s) {
  std::string out =
      "allocator,settings,question,bytes_limit,jobs,fit,failed,errors,need_median,need_p90,need_max,"
      "saving_median,saving_total,fresh_need_median,fresh_need_max\n";
  for (const SummaryRow& r : s.rows) {
    int64_t total = 0;
    for (int64_t v : r.savings) total += v;
    auto cell = [](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string(); };
    out += fmt::format("{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.allocator, r.settings,
                       r.question, r.bytes_limit, r.jobs, r.fit, r.failed, r.errors, cell(r.Percentile(0.5)),
                       cell(r.Percentile(0.9)), cell(r.Percentile(1.0)),
                       r.savings.empty() ? "" : std::to_string(Median(r.savings)),
                       r.savings.empty() ? "" : std::to_string(total), cell(r.FreshPercentile(0.5)),
                       cell(r.FreshPercentile(1.0)));
  }
  return out;
}

}  // namespace hbmsim::sim::sweep
