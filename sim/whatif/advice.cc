#include "sim/whatif/advice.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
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
    std::vector<std::string> row_sets;
    for (const OptionEdit& edit : row.sets) row_sets.push_back(edit.Text());
    if (row.policy.empty()) {
      std::vector<std::string> edited = sets;
      edited.insert(edited.end(), row_sets.begin(), row_sets.end());
      c = ResolveWithSets(allocator_arg, edited, scenario);
    } else {
      c = ResolveWithSets(row.policy, row_sets, scenario);
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

// What a line's fraction setting says: nothing (no setting, or no minimum),
// the setting ("XLA_PYTHON_CLIENT_MEM_FRACTION=0.62"), or that the minimum
// is more than the whole device.
struct FractionOutcome {
  std::string text;  // "" for nothing
  bool over_device = false;
};

FractionOutcome Fraction(const AdviceLine& l, Bytes device_memory) {
  const std::string& setting = l.row.config.policy->limit_setting;
  if (setting.empty() || !l.row.size.found) return {};
  const std::optional<std::string> f = LimitFraction(l.row.size.min_bytes_limit, device_memory);
  if (!f) return {fmt::format("more than the whole device ({})", HumanReadableNumBytes(device_memory)), true};
  return {fmt::format(fmt::runtime(setting), *f), false};
}

std::string FractionLines(const Advice& advice, Bytes device_memory) {
  std::vector<std::pair<std::string, FractionOutcome>> lines;  // (how, its fraction)
  const auto add = [&](const AdviceLine& l) {
    FractionOutcome f = Fraction(l, device_memory);
    if (!f.text.empty()) lines.emplace_back(l.how, std::move(f));
  };
  add(advice.today);
  for (const AdviceLine& l : advice.candidates) add(l);
  if (lines.empty()) return "";
  if (std::all_of(lines.begin(), lines.end(), [](const auto& line) { return line.second.over_device; })) {
    return fmt::format("\nAs a fraction of the device's {} ({} B): none; every minimum limit is more than the "
                       "whole device.\n",
                       HumanReadableNumBytes(device_memory), device_memory.value());
  }
  size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.first.size());
  std::string out = fmt::format("\nEach minimum limit as a fraction of the device's {} ({} B):\n",
                                HumanReadableNumBytes(device_memory), device_memory.value());
  for (const auto& [how, f] : lines) out += fmt::format("  {:<{}}  {}\n", how, width, f.text);
  return out;
}

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

std::optional<std::string> LimitFraction(Bytes min_limit, Bytes device_memory) {
  if (device_memory.value() == 0 || min_limit > device_memory) return std::nullopt;
  // Hundredths rounded up, in integers: min * 100 / total, ceiling.
  const unsigned __int128 scaled = static_cast<unsigned __int128>(min_limit.value()) * 100;
  const uint64_t hundredths =
      static_cast<uint64_t>((scaled + device_memory.value() - 1) / device_memory.value());
  return fmt::format("{}.{:02}", hundredths / 100, hundredths % 100);
}

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

namespace {

// The ranked table, one line per candidate.
std::string CandidateTable(const Advice& advice, std::string_view indent = "") {
  std::string out =
      fmt::format("{}{:<14} {:>24} {:>18}  {}\n", indent, "fits at L", "min limit", "vs today", "setting");
  for (const AdviceLine& l : advice.candidates) {
    out += fmt::format("{}{:<14} {:>24} {:>18}  {}\n", indent, FitsText(l.row), MinText(l.row),
                       SavingText(advice.today.row, l.row), l.how);
  }
  return out;
}

}  // namespace

std::string AdviceSectionText(std::optional<Bytes> limit, const Advice& advice, Bytes peak_live,
                              std::optional<Bytes> start_state_decides) {
  std::string out = fmt::format("What would fit{}: each setting the allocator offers, replayed (as `hbmsim advise`)\n",
                                limit ? " at L = " + BytesText(*limit) : "");
  out += fmt::format("  today's minimum limit: {}\n", MinText(advice.today.row));
  if (advice.candidates.empty()) return out + "  nothing to try: no setting differs from today's\n";
  out += CandidateTable(advice, "  ");
  const bool any_fits = std::any_of(advice.candidates.begin(), advice.candidates.end(),
                                    [](const AdviceLine& l) { return FitsAt(l.row); });
  if (limit && peak_live > *limit) {
    out += fmt::format("  no setting can fit at L: the job's peak live bytes, {}, exceed it by {}; the job itself "
                       "must hold less at its peak\n",
                       BytesText(peak_live), BytesText(peak_live - *limit));
  } else if (start_state_decides) {
    out += fmt::format("  every setting needs the same: the recording began with {} already reserved (what the "
                       "allocator held before its first recorded event), more than the job's own peak live bytes "
                       "({})\n",
                       BytesText(*start_state_decides), BytesText(peak_live));
  } else if (limit && !any_fits) {
    out += "  no setting fits at L; the smallest minimum limit is the first line's\n";
  }
  return out;
}

std::string FreshStartAdviceText(std::optional<Bytes> limit, const Advice& fresh) {
  std::string out = fmt::format(
      "\nFrom a fresh start{}: a new run of the job, its live blocks placed through the policy and the cache "
      "rebuilt (--start-state place); the table above is that process resumed with its cache as recorded\n",
      limit ? " at L = " + BytesText(*limit) : "");
  out += fmt::format("  today's minimum limit: {}; at L: {}\n", MinText(fresh.today.row),
                     FitsText(fresh.today.row));
  if (fresh.candidates.empty()) return out + "  nothing to try: no setting differs from today's\n";
  return out + CandidateTable(fresh, "  ");
}

std::optional<Bytes> StartStateDecides(const Scenario& scenario, const Advice& advice, Bytes peak_live) {
  if (!scenario.start_summary || scenario.start_summary->reserved <= peak_live) return std::nullopt;
  const CompareRow& today = advice.today.row;
  if (!today.size.found || today.size.min_bytes_limit < scenario.start_summary->reserved) return std::nullopt;
  for (const AdviceLine& l : advice.candidates) {
    if (!l.row.size.found || l.row.size.min_bytes_limit != today.size.min_bytes_limit) return std::nullopt;
  }
  return scenario.start_summary->reserved;
}

std::string AdviceText(const Scenario& scenario, const ScenarioSurvey& survey, std::optional<Bytes> limit,
                       const Advice& advice, std::optional<Bytes> device_memory, const std::string& limit_source) {
  std::string out = "hbmsim advise\n";
  out += fmt::format("  recording:       {}\n  device:          {}\n", scenario.path(), DeviceLine(scenario, survey));
  out += fmt::format("  today:           {} ({})\n", RowLabel(advice.today.row.config),
                     EffectiveOptionsText(advice.today.row.config));
  out += fmt::format("  peak live bytes: {} (no allocator needs less)\n", BytesText(survey.peak_live_bytes));
  out += fmt::format("  limit L:         {}\n",
                     !limit                 ? std::string("- (no --bytes-limit)")
                     : limit_source.empty() ? BytesText(*limit)
                                            : fmt::format("{} from {}", BytesText(*limit), limit_source));
  out += fmt::format("  today's minimum: {}; at L: {}\n\n", MinText(advice.today.row), FitsText(advice.today.row));
  if (advice.candidates.empty()) return out + "Nothing to try: the policy lists no change that differs from today.\n";
  out += CandidateTable(advice);
  if (limit && survey.peak_live_bytes > *limit) {
    out += fmt::format("\nNo setting can fit at L: the peak live bytes exceed it by {}; the job itself must hold "
                       "less at its peak.\n",
                       BytesText(survey.peak_live_bytes - *limit));
  }
  if (const std::optional<Bytes> reserved = StartStateDecides(scenario, advice, survey.peak_live_bytes)) {
    out += fmt::format("\nEvery setting needs the same: the recording began with {} already reserved (what the "
                       "allocator held before its first recorded event), more than the job's own peak live bytes "
                       "({}); a setting changes only what is placed after that.\n",
                       BytesText(*reserved), BytesText(survey.peak_live_bytes));
  }
  if (device_memory) out += FractionLines(advice, *device_memory);
  out += "\nmin limit: the smallest device limit at which every request fits with that setting (as `hbmsim size`);\n"
         "vs today: its min limit against today's.\n";
  return out;
}

nlohmann::ordered_json AdviceJson(const Scenario& scenario, std::optional<Bytes> limit, const Advice& advice,
                                  std::optional<Bytes> device_memory) {
  nlohmann::ordered_json j;
  j["recording"] = scenario.path();
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->value()) : nlohmann::ordered_json();
  j["device_memory"] = device_memory ? nlohmann::ordered_json(device_memory->value()) : nlohmann::ordered_json();
  const auto line = [&](const AdviceLine& l) {
    nlohmann::ordered_json one = LineJson(l, advice.today.row);
    if (device_memory) {
      const FractionOutcome f = Fraction(l, *device_memory);
      one["limit_setting"] = f.text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(f.text);
    }
    return one;
  };
  j["today"] = line(advice.today);
  j["candidates"] = nlohmann::ordered_json::array();
  for (const AdviceLine& l : advice.candidates) j["candidates"].push_back(line(l));
  return j;
}

}  // namespace hbmsim::sim
