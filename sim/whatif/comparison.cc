#include "sim/whatif/comparison.h"

#include "fmt/format.h"
#include "sim/report/replay_report.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"

namespace hbmsim {
namespace {

std::optional<double> Fragmentation(uint64_t free, uint64_t largest) {
  if (free == 0) return std::nullopt;  // TF's GetFragmentation is NaN here
  return static_cast<double>(free - std::min(free, largest)) / static_cast<double>(free);
}

std::optional<double> FragmentationOf(const AllocatorStats& s, Bytes limit) {
  const int64_t held = s.bytes_in_use + s.bytes_reserved;
  const uint64_t free = limit.value() > static_cast<uint64_t>(held) ? limit.value() - held : 0;
  return Fragmentation(free, static_cast<uint64_t>(std::max<int64_t>(0, s.largest_free_block_bytes)));
}

std::string Num(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : "-"; }
nlohmann::ordered_json Json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

std::string Label(const AllocatorConfig& c) {
  const std::string options = EffectiveOptionsText(c);
  return options.empty() || options == "(none)" ? c.policy->name
                                                : fmt::format("{} ({})", c.policy->name, options);
}

nlohmann::ordered_json RowJson(const CompareRow& r) {
  nlohmann::ordered_json j;
  j["allocator"] = AllocatorJson(r.config);
  j["min_bytes_limit"] =
      r.size.found ? nlohmann::ordered_json(r.size.min_bytes_limit.value()) : nlohmann::ordered_json();
  j["overhead"] = r.size.found ? nlohmann::ordered_json(r.size.overhead) : nlohmann::ordered_json();
  j["non_monotonic"] =
      r.size.non_monotonic ? nlohmann::ordered_json(r.size.non_monotonic->value()) : nlohmann::ordered_json();
  j["heap_minus_lower_bound"] =
      r.size.found ? nlohmann::ordered_json(r.size.min_bytes_limit.value() - r.size.peak_live_bytes.value())
                   : nlohmann::ordered_json();
  if (!r.at_limit) return j;
  const AtLimit& m = *r.at_limit;
  j["at_limit"] = {{"failures", m.failures},
                   {"oom", m.oom},
                   {"fragmentation", m.fragmentation},
                   {"peak_bytes_in_use", m.peak_bytes_in_use},
                   {"peak_pool_bytes", m.peak_pool_bytes ? nlohmann::ordered_json(*m.peak_pool_bytes)
                                                         : nlohmann::ordered_json()},
                   {"fragmentation_at_first_failure", Json(m.frag_at_first_failure)},
                   {"fragmentation_at_peak", Json(m.frag_at_peak)},
                   {"utilization", Json(m.utilization)},
                   {"johnstone_wilson_at_peak_live", Json(m.jw_at_peak_live)}};
  return j;
}

}  // namespace

// The full replay at L (what `hbmsim replay` reports), then a second one that
// takes the state at the peak live bytes and at the peak bytes in use.
absl::StatusOr<AtLimit> MeasureAtLimit(const TrialTarget& target, Bytes limit) {
  absl::StatusOr<TrialResult> full = RunTrial(target, limit, TrialOptions{false, {}, {}});
  if (!full.ok()) return full.status();
  AtLimit m;
  m.failures = full->failures;
  m.oom = full->oom;
  m.fragmentation = full->fragmentation;
  m.peak_bytes_in_use = full->final_stats.peak_bytes_in_use;
  m.peak_pool_bytes = full->final_stats.peak_pool_bytes;
  if (full->first_failure) {
    m.frag_at_first_failure = Fragmentation(full->first_failure->free_bytes.value(),
                                            full->first_failure->largest_free_block.value());
  }
  if (m.peak_pool_bytes && *m.peak_pool_bytes > 0) {
    m.utilization = static_cast<double>(m.peak_bytes_in_use) / static_cast<double>(*m.peak_pool_bytes);
  }
  if (full->summary.start_state_refused) return m;  // nothing was replayed: no states to probe
  absl::StatusOr<TrialResult> probes =
      RunTrial(target, limit, TrialOptions{false, full->summary.peak_live_event, m.peak_bytes_in_use});
  if (!probes.ok()) return probes.status();
  m.frag_at_peak = FragmentationOf(probes->in_use_target_stats.value_or(probes->final_stats), limit);
  const Bytes peak_live = full->summary.peak_live_bytes;
  if (probes->probe_stats && !peak_live.is_zero()) {
    const AllocatorStats& s = *probes->probe_stats;
    const int64_t pool = s.pool_bytes.value_or(s.bytes_in_use + s.bytes_reserved);
    const double live = static_cast<double>(peak_live.value());
    m.jw_at_peak_live = (static_cast<double>(pool) - live) / live;
  }
  return m;
}

absl::StatusOr<std::vector<CompareRow>> CompareAllocators(const Scenario& scenario, const ScenarioSurvey& survey,
                                                          const std::vector<AllocatorConfig>& configs,
                                                          std::optional<Bytes> limit,
                                                          const SizeOptions& options) {
  std::vector<CompareRow> rows;
  for (const AllocatorConfig& config : configs) {
    CompareRow row{config, {}, std::nullopt};
    absl::StatusOr<TrialTarget> target = MakeTrialTarget(scenario, config, survey);
    if (!target.ok()) return target.status();
    absl::StatusOr<SizeResult> size = FindMinLimit(*target, options);
    if (!size.ok()) return size.status();
    row.size = *std::move(size);
    if (limit) {
      absl::StatusOr<AtLimit> m = MeasureAtLimit(*target, *limit);
      if (!m.ok()) return m.status();
      row.at_limit = *m;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string CompareText(const Scenario& scenario, const ScenarioSurvey& survey, std::optional<Bytes> limit,
                        const std::vector<CompareRow>& rows) {
  std::string out = "hbmsim compare\n";
  out += fmt::format("  trace:           {} ({} events)\n", scenario.path(), survey.events_replayed);
  out += fmt::format("  device:          {}\n", DeviceLine(scenario, survey));
  out += fmt::format("  peak live bytes: {}\n", survey.peak_live_bytes.value());
  out += fmt::format("  limit L:         {}\n\n",
                     limit ? fmt::format("{}", limit->value()) : "- (no --bytes-limit)");
  out += fmt::format("{:<12} {:>14} {:>9} {:>9} {:>6} {:>6} {:>14} {:>14} {:>9} {:>9} {:>9} {:>12} {:>9}\n",
                     "allocator", "min_limit", "overhead", "failures", "oom", "frag", "peak_in_use",
                     "peak_pool", "frag@fail", "frag@peak", "util", "heap-lb", "jw@live");
  for (const CompareRow& r : rows) {
    // Options are listed under the table: they would break the columns.
    const std::string label = r.config.policy->name + (r.size.non_monotonic ? " !" : "");
    const std::string min = r.size.found ? fmt::format("{}", r.size.min_bytes_limit.value()) : "none";
    const std::string overhead = r.size.found ? fmt::format("{:.4f}", r.size.overhead) : "-";
    const std::string heap_lb =
        r.size.found ? fmt::format("{}", r.size.min_bytes_limit.value() - r.size.peak_live_bytes.value())
                     : "-";
    if (!r.at_limit) {
      out +=
          fmt::format("{:<12} {:>14} {:>9} {:>9} {:>6} {:>6} {:>14} {:>14} {:>9} {:>9} {:>9} {:>12} {:>9}\n",
                      label, min, overhead, "-", "-", "-", "-", "-", "-", "-", "-", heap_lb, "-");
      continue;
    }
    const AtLimit& m = *r.at_limit;
    out += fmt::format("{:<12} {:>14} {:>9} {:>9} {:>6} {:>6} {:>14} {:>14} {:>9} {:>9} {:>9} {:>12} {:>9}\n",
                       label, min, overhead, m.failures, m.oom, m.fragmentation, m.peak_bytes_in_use,
                       m.peak_pool_bytes ? fmt::format("{}", *m.peak_pool_bytes) : "-",
                       Num(m.frag_at_first_failure), Num(m.frag_at_peak), Num(m.utilization), heap_lb,
                       Num(m.jw_at_peak_live));
  }
  out += "\noptions:\n";
  for (const CompareRow& r : rows) out += fmt::format("  {}\n", Label(r.config));
  for (const CompareRow& r : rows) {
    if (r.size.non_monotonic) {
      out +=
          fmt::format("\n! {}: not monotonic: {} fits but the larger limit {} failed", r.config.policy->name,
                      r.size.min_bytes_limit.value(), r.size.non_monotonic->value());
    }
  }
  if (out.back() != '\n') out += "\n";
  return out;
}

nlohmann::ordered_json CompareJson(const Scenario& scenario, const ScenarioSurvey& survey,
                                   std::optional<Bytes> limit, const std::vector<CompareRow>& rows) {
  nlohmann::ordered_json j;
  j["trace"] = scenario.path();
  j["device"] = survey.device ? nlohmann::ordered_json(survey.device->value()) : nlohmann::ordered_json();
  j["peak_live_bytes"] = survey.peak_live_bytes.value();
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->value()) : nlohmann::ordered_json();
  j["rows"] = nlohmann::ordered_json::array();
  for (const CompareRow& r : rows) j["rows"].push_back(RowJson(r));
  return j;
}

namespace {

struct Line {
  std::string name;
  std::optional<int64_t> a, b;
};

std::vector<Line> Lines(const ScenarioSurvey& a, const ScenarioSurvey& b, const CompareRow& ra,
                        const CompareRow& rb) {
  auto min = [](const CompareRow& r) {
    return r.size.found ? std::optional<int64_t>(static_cast<int64_t>(r.size.min_bytes_limit.value()))
                        : std::nullopt;
  };
  auto at = [](const CompareRow& r, auto f) {
    return r.at_limit ? std::optional<int64_t>(f(*r.at_limit)) : std::nullopt;
  };
  auto peak = [](const AtLimit& m) { return m.peak_bytes_in_use; };
  auto failures = [](const AtLimit& m) { return static_cast<int64_t>(m.failures); };
  return {{"peak_live_bytes", static_cast<int64_t>(a.peak_live_bytes.value()),
           static_cast<int64_t>(b.peak_live_bytes.value())},
          {"peak_bytes_in_use", at(ra, peak), at(rb, peak)},
          {"min_bytes_limit", min(ra), min(rb)},
          {"failures_at_limit", at(ra, failures), at(rb, failures)}};
}

std::string Cell(const std::optional<int64_t>& v) { return v ? fmt::format("{}", *v) : "-"; }

}  // namespace

std::string BaselineCandidateText(const std::string& baseline, const std::string& candidate,
                                  const ScenarioSurvey& a, const ScenarioSurvey& b, std::optional<Bytes> limit,
                                  const CompareRow& ra, const CompareRow& rb) {
  std::string out = "hbmsim compare (baseline vs candidate)\n";
  out += fmt::format("  baseline:  {}\n  candidate: {}\n  allocator: {}\n  limit L:   {}\n\n", baseline,
                     candidate, Label(ra.config),
                     limit ? fmt::format("{}", limit->value()) : "- (no --bytes-limit)");
  out += fmt::format("{:<20} {:>16} {:>16} {:>16} {:>9}\n", "", "baseline", "candidate", "delta", "delta%");
  for (const Line& l : Lines(a, b, ra, rb)) {
    std::string delta = "-", pct = "-";
    if (l.a && l.b) {
      delta = fmt::format("{:+}", *l.b - *l.a);
      if (*l.a != 0)
        pct = fmt::format("{:+.2f}%", 100.0 * static_cast<double>(*l.b - *l.a) / static_cast<double>(*l.a));
    }
    out += fmt::format("{:<20} {:>16} {:>16} {:>16} {:>9}\n", l.name, Cell(l.a), Cell(l.b), delta, pct);
  }
  return out;
}

nlohmann::ordered_json BaselineCandidateJson(const ScenarioSurvey& a, const ScenarioSurvey& b,
                                             std::optional<Bytes> limit, const CompareRow& ra,
                                             const CompareRow& rb) {
  nlohmann::ordered_json j;
  j["allocator"] = AllocatorJson(ra.config);
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->value()) : nlohmann::ordered_json();
  for (const Line& l : Lines(a, b, ra, rb)) {
    auto v = [](const std::optional<int64_t>& x) {
      return x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json();
    };
    j[l.name] = {{"baseline", v(l.a)},
                 {"candidate", v(l.b)},
                 {"delta", l.a && l.b ? nlohmann::ordered_json(*l.b - *l.a) : nlohmann::ordered_json()}};
  }
  return j;
}

}  // namespace hbmsim
