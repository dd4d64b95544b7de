#include "sim/whatif/advice.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/report/replay_report.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/human_bytes.h"

namespace hbmsim {
namespace {

std::string BytesText(Bytes b) { return fmt::format("{} ({})", b.value(), HumanReadableNumBytes(b)); }

bool SameRun(const AllocatorConfig& a, const AllocatorConfig& b) {
  return a.policy == b.policy && EffectiveOptions(a).entries() == EffectiveOptions(b).entries();
}

// The configurations the job's policy lists as things to try, each with the
// words for it; the ones that would run exactly as today are dropped.
absl::StatusOr<std::vector<std::pair<std::string, AllocatorConfig>>> Candidates(
    const Scenario& scenario, const AllocatorConfig& today, const std::string& allocator_arg,
    const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, AllocatorConfig>> out;
  for (const AdviceRow& row : today.policy->advice) {
    absl::StatusOr<AllocatorConfig> c;
    if (row.policy.empty()) {
      std::vector<std::string> edited = sets;
      edited.insert(edited.end(), row.sets.begin(), row.sets.end());
      c = ResolveWithSets(allocator_arg, edited, scenario);
    } else {
      c = ResolveWithSets(row.policy, row.sets, scenario);
    }
    if (!c.ok()) return c.status();
    if (SameRun(*c, today)) continue;
    out.emplace_back(row.how, *std::move(c));
  }
  return out;
}

bool FitsAt(const CompareRow& r) { return r.at_limit && r.at_limit->failures == 0; }

// Fitting at L first, then the smallest minimum limit; a row with no
// minimum (nothing up to the cap fits) last. Ties keep the table's order.
bool Better(const AdviceLine& a, const AdviceLine& b) {
  if (FitsAt(a.row) != FitsAt(b.row)) return FitsAt(a.row);
  if (a.row.size.found != b.row.size.found) return a.row.size.found;
  return a.row.size.found && a.row.size.min_bytes_limit < b.row.size.min_bytes_limit;
}

std::string FitsText(const CompareRow& r) {
  if (!r.at_limit) return "-";
  return r.at_limit->failures == 0 ? "yes" : fmt::format("no ({} fail)", r.at_limit->failures);
}

// Against today's minimum limit, in words so no cell is a negative number.
std::string SavingText(const CompareRow& today, const CompareRow& r) {
  if (!today.size.found || !r.size.found) return "-";
  const Bytes a = today.size.min_bytes_limit, b = r.size.min_bytes_limit;
  if (a == b) return "same";
  return b < a ? fmt::format("saves {}", HumanReadableNumBytes(a - b))
               : fmt::format("costs {}", HumanReadableNumBytes(b - a));
}

std::string MinText(const CompareRow& r) { return r.size.found ? BytesText(r.size.min_bytes_limit) : "none"; }

nlohmann::ordered_json LineJson(const AdviceLine& l, const CompareRow& today) {
  nlohmann::ordered_json j;
  j["how"] = l.how;
  j["label"] = RowLabel(l.row.config);
  j["allocator"] = AllocatorJson(l.row.config);
  j["min_bytes_limit"] =
      l.row.size.found ? nlohmann::ordered_json(l.row.size.min_bytes_limit.value()) : nlohmann::ordered_json();
  j["fits_at_limit"] = l.row.at_limit ? nlohmann::ordered_json(FitsAt(l.row)) : nlohmann::ordered_json();
  j["failures_at_limit"] =
      l.row.at_limit ? nlohmann::ordered_json(l.row.at_limit->failures) : nlohmann::ordered_json();
  j["saving_vs_today"] = SavingText(today, l.row);
  return j;
}

}  // namespace

absl::StatusOr<Advice> Advise(const Scenario& scenario, const ScenarioSurvey& survey, const AllocatorConfig& today,
                              const std::string& allocator_arg, const std::vector<std::string>& sets,
                              std::optional<Bytes> limit, const SizeOptions& options) {
  absl::StatusOr<std::vector<std::pair<std::string, AllocatorConfig>>> candidates =
      Candidates(scenario, today, allocator_arg, sets);
  if (!candidates.ok()) return candidates.status();
  std::vector<AllocatorConfig> configs = {today};
  for (const auto& c : *candidates) configs.push_back(c.second);
  absl::StatusOr<std::vector<CompareRow>> rows = CompareAllocators(scenario, survey, configs, limit, options);
  if (!rows.ok()) return rows.status();
  Advice advice{{"today", (*rows)[0]}, {}};
  for (size_t i = 0; i < candidates->size(); ++i) advice.candidates.push_back({(*candidates)[i].first, (*rows)[i + 1]});
  std::stable_sort(advice.candidates.begin(), advice.candidates.end(), Better);
  return advice;
}

std::string AdviceText(const Scenario& scenario, const ScenarioSurvey& survey, std::optional<Bytes> limit,
                       const Advice& advice) {
  std::string out = "hbmsim advise\n";
  out += fmt::format("  recording:       {}\n  device:          {}\n", scenario.path(), DeviceLine(scenario, survey));
  out += fmt::format("  today:           {} ({})\n", RowLabel(advice.today.row.config),
                     EffectiveOptionsText(advice.today.row.config));
  out += fmt::format("  peak live bytes: {} (no allocator needs less)\n", BytesText(survey.peak_live_bytes));
  out += fmt::format("  limit L:         {}\n", limit ? BytesText(*limit) : "- (no --bytes-limit)");
  out += fmt::format("  today's minimum: {}; at L: {}\n\n", MinText(advice.today.row), FitsText(advice.today.row));
  if (advice.candidates.empty()) return out + "Nothing to try: the policy lists no change that differs from today.\n";
  out += fmt::format("{:<14} {:>24} {:>18}  {}\n", "fits at L", "min limit", "vs today", "setting");
  for (const AdviceLine& l : advice.candidates) {
    out += fmt::format("{:<14} {:>24} {:>18}  {}\n", FitsText(l.row), MinText(l.row),
                       SavingText(advice.today.row, l.row), l.how);
  }
  if (limit && survey.peak_live_bytes > *limit) {
    out += fmt::format("\nNo setting can fit at L: the peak live bytes exceed it by {}; the job itself must hold "
                       "less at its peak.\n",
                       BytesText(survey.peak_live_bytes - *limit));
  }
  out += "\nmin limit: the smallest device limit at which every request fits with that setting (as `hbmsim size`);\n"
         "vs today: its min limit against today's.\n";
  return out;
}

nlohmann::ordered_json AdviceJson(const Scenario& scenario, std::optional<Bytes> limit, const Advice& advice) {
  nlohmann::ordered_json j;
  j["recording"] = scenario.path();
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->value()) : nlohmann::ordered_json();
  j["today"] = LineJson(advice.today, advice.today.row);
  j["candidates"] = nlohmann::ordered_json::array();
  for (const AdviceLine& l : advice.candidates) j["candidates"].push_back(LineJson(l, advice.today.row));
  return j;
}

}  // namespace hbmsim
