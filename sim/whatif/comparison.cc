#include "sim/whatif/comparison.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "trace/core/human_bytes.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/scenario_event_log.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"

namespace hbmsim::sim {
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
  j["label"] = RowLabel(r.config);
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

// The full replay at L (what `hbmsim replay` reports), taking the state at
// the peak live bytes (the survey's event: the engine counts live bytes the
// same under every policy) and at the first reach of the peak bytes in use.
// Where the replay's peak live event is not the survey's, a second replay
// takes the state at its own.
absl::StatusOr<AtLimit> MeasureAtLimit(const TrialTarget& target, Bytes limit) {
  absl::StatusOr<TrialResult> full =
      RunTrial(target, limit, TrialOptions{false, target.survey.peak_live_event, true});
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
  const TrialResult* probes = &*full;
  absl::StatusOr<TrialResult> again;
  if (full->summary.peak_live_event != target.survey.peak_live_event) {
    again = RunTrial(target, limit, TrialOptions{false, full->summary.peak_live_event, true});
    if (!again.ok()) return again.status();
    probes = &*again;
  }
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

namespace {

// What a configuration's runs decide as (PolicySpec::decides_as).
OptionValues DecidesAs(const AllocatorConfig& config) {
  const OptionValues ran = EffectiveOptions(config);
  return config.policy != nullptr ? config.policy->DecidesAs(ran) : ran;
}

// An earlier row whose runs are this configuration's, or nullptr.
const CompareRow* DecidingAlike(const std::vector<CompareRow>& rows, const AllocatorConfig& config) {
  if (config.policy == nullptr) return nullptr;
  for (const CompareRow& r : rows) {
    if (r.config.policy == config.policy && DecidesAs(r.config).entries() == DecidesAs(config).entries()) return &r;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::vector<CompareRow>> CompareAllocators(const Scenario& scenario, const ScenarioSurvey& survey,
                                                          const std::vector<AllocatorConfig>& configs,
                                                          std::optional<Bytes> limit,
                                                          const SizeOptions& options) {
  std::vector<CompareRow> rows;
  // One log of the events for every policy whose trials share it.
  ScenarioSurvey with_events = survey;
  if (!with_events.events && options.share_trials &&
      std::any_of(configs.begin(), configs.end(),
                  [&](const AllocatorConfig& c) { return SharedTrials::MayShare(scenario, c); })) {
    with_events.events = ReadEventLog(scenario, survey.events_read);
  }
  for (const AllocatorConfig& config : configs) {
    CompareRow row{config, {}, std::nullopt};
    SizeOptions row_options = options;
    if (options.on_progress) {
      SizeProgress starting;
      starting.config = rows.size();
      starting.configs = configs.size();
      starting.config_label = RowLabel(config);
      options.on_progress(starting);
      row_options.on_progress = [&options, starting](const SizeProgress& p) {
        SizeProgress q = p;
        q.config = starting.config;
        q.configs = starting.configs;
        q.config_label = starting.config_label;
        options.on_progress(q);
      };
    }
    if (const CompareRow* same = DecidingAlike(rows, config)) {
      // The same runs: what they found, without running them again.
      row.size = same->size;
      row.at_limit = same->at_limit;
      rows.push_back(std::move(row));
      continue;
    }
    absl::StatusOr<TrialTarget> target = MakeTrialTarget(scenario, config, with_events);
    if (!target.ok()) return target.status();
    absl::StatusOr<SizeResult> size = FindMinLimit(*target, row_options);
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

namespace {

// Every byte cell: exact, with human units beside it.
std::string BytesCell(uint64_t b) { return fmt::format("{} ({})", b, HumanReadableNumBytes(Bytes(b))); }

// What each column means, printed under every table so no one needs the docs.
constexpr std::string_view kLegend =
    "columns:\n"
    "  min_limit   the smallest --bytes-limit at which every request fits (size search)\n"
    "  overhead    min_limit / peak live bytes - 1\n"
    "  failures    failed requests at L (oom: not enough free bytes; frag: enough, but not in one block)\n"
    "  peak_in_use the allocator's peak bytes in use at L (block sizes, rounding included)\n"
    "  peak_pool   the most it held from the device at L\n"
    "  frag@fail   (free - largest free block) / free at the first failed request at L\n"
    "  frag@peak   the same right after the alloc that first reached peak_in_use\n"
    "  util        peak_in_use / peak_pool\n"
    "  heap-lb     min_limit - peak live bytes: the bytes this policy needs beyond the lower bound\n"
    "  jw@live     (pool - live) / live at the event of peak live bytes (Johnstone-Wilson)\n"
    "  !           the size search found a larger limit that fails (not monotonic)\n";

}  // namespace

std::string RowLabel(const AllocatorConfig& config) {
  const OptionValues ran = EffectiveOptions(config);
  const OptionValues defaults = EffectiveOptions(DefaultConfig(*config.policy));
  std::string label = config.policy->name;
  char separator = ':';
  for (const auto& [name, value] : ran.entries()) {
    const OptionValue* d = defaults.Find(name);
    if (d != nullptr && *d == value) continue;
    label += fmt::format("{}{}={}", separator, name, FormatOptionValue(value));
    separator = ',';
  }
  return label;
}

std::vector<std::string> RowLabels(const std::vector<CompareRow>& rows) {
  std::vector<std::string> labels;
  for (const CompareRow& r : rows) {
    std::string label = RowLabel(r.config);
    // The same settings twice (a YAML and its built-in twin) still get two names.
    const size_t same = static_cast<size_t>(std::count(labels.begin(), labels.end(), label)) +
                        static_cast<size_t>(std::count_if(labels.begin(), labels.end(), [&](const std::string& l) {
                          return l.rfind(label + " #", 0) == 0;
                        }));
    if (same > 0) label += fmt::format(" #{}", same + 1);
    labels.push_back(std::move(label));
  }
  return labels;
}

bool AnyRowFails(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const CompareRow& r) { return r.at_limit && r.at_limit->failures > 0; });
}

std::string CompareText(const Scenario& scenario, const ScenarioSurvey& survey,
                        const std::optional<LimitChoice>& limit, const std::vector<CompareRow>& rows) {
  std::string out = "hbmsim compare\n";
  out += fmt::format("  trace:           {} ({} events)\n", scenario.path(), survey.events_replayed);
  out += fmt::format("  device:          {}\n", DeviceLine(scenario, survey));
  out += fmt::format("  peak live bytes: {}\n", BytesCell(survey.peak_live_bytes.value()));
  out += fmt::format("  limit L:         {}\n\n",
                     limit ? fmt::format("{} from {}", BytesCell(limit->limit.value()), limit->source)
                           : "- (no --bytes-limit, and the recording states none)");
  const std::vector<std::string> labels = RowLabels(rows);
  size_t width = std::string_view("allocator").size();
  for (const std::string& l : labels) width = std::max(width, l.size() + 2);
  constexpr std::string_view kRow = "{:<{}} {:>22} {:>9} {:>9} {:>6} {:>6} {:>22} {:>22} {:>9} {:>9} {:>9} {:>22} {:>9}\n";
  out += fmt::format(kRow, "allocator", width, "min_limit", "overhead", "failures", "oom", "frag", "peak_in_use",
                     "peak_pool", "frag@fail", "frag@peak", "util", "heap-lb", "jw@live");
  for (size_t i = 0; i < rows.size(); ++i) {
    const CompareRow& r = rows[i];
    const std::string label = labels[i] + (r.size.non_monotonic ? " !" : "");
    const std::string min = r.size.found ? BytesCell(r.size.min_bytes_limit.value()) : "none";
    const std::string overhead = r.size.found ? fmt::format("{:.4f}", r.size.overhead) : "-";
    const std::string heap_lb =
        r.size.found ? BytesCell(r.size.min_bytes_limit.value() - r.size.peak_live_bytes.value()) : "-";
    if (!r.at_limit) {
      out += fmt::format(kRow, label, width, min, overhead, "-", "-", "-", "-", "-", "-", "-", "-", heap_lb, "-");
      continue;
    }
    const AtLimit& m = *r.at_limit;
    out += fmt::format(kRow, label, width, min, overhead, m.failures, m.oom, m.fragmentation,
                       BytesCell(static_cast<uint64_t>(m.peak_bytes_in_use)),
                       m.peak_pool_bytes ? BytesCell(static_cast<uint64_t>(*m.peak_pool_bytes)) : "-",
                       Num(m.frag_at_first_failure), Num(m.frag_at_peak), Num(m.utilization), heap_lb,
                       Num(m.jw_at_peak_live));
  }
  out += "\noptions:\n";
  for (size_t i = 0; i < rows.size(); ++i) out += fmt::format("  {}: {}\n", labels[i], EffectiveOptionsText(rows[i].config));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size.non_monotonic) {
      out += fmt::format("\n! {}: not monotonic: {} fits but the larger limit {} failed\n", labels[i],
                         rows[i].size.min_bytes_limit.value(), rows[i].size.non_monotonic->value());
    }
  }
  if (limit && AnyRowFails(rows)) {
    std::string failing;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].at_limit && rows[i].at_limit->failures > 0) failing += (failing.empty() ? "" : ", ") + labels[i];
    }
    out += fmt::format("\nFails at L = {}: {} (exit 1)\n", BytesCell(limit->limit.value()), failing);
  }
  return out + "\n" + std::string(kLegend);
}

nlohmann::ordered_json CompareJson(const Scenario& scenario, const ScenarioSurvey& survey,
                                   const std::optional<LimitChoice>& limit, const std::vector<CompareRow>& rows) {
  nlohmann::ordered_json j;
  j["trace"] = scenario.path();
  j["device"] = survey.device ? nlohmann::ordered_json(survey.device->value()) : nlohmann::ordered_json();
  j["peak_live_bytes"] = survey.peak_live_bytes.value();
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->limit.value()) : nlohmann::ordered_json();
  j["bytes_limit_source"] = limit ? nlohmann::ordered_json(limit->source) : nlohmann::ordered_json();
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
                                  const ScenarioSurvey& a, const ScenarioSurvey& b,
                                  const std::optional<LimitChoice>& limit, const CompareRow& ra, const CompareRow& rb) {
  std::string out = "hbmsim compare (baseline vs candidate)\n";
  out += fmt::format("  baseline:  {}\n  candidate: {}\n  allocator: {}\n  limit L:   {}\n\n", baseline,
                     candidate, Label(ra.config),
                     limit ? fmt::format("{} from {}", limit->limit.value(), limit->source)
                           : "- (no --bytes-limit, and the baseline states none)");
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
                                             const std::optional<LimitChoice>& limit, const CompareRow& ra,
                                             const CompareRow& rb) {
  nlohmann::ordered_json j;
  j["allocator"] = AllocatorJson(ra.config);
  j["bytes_limit"] = limit ? nlohmann::ordered_json(limit->limit.value()) : nlohmann::ordered_json();
  j["bytes_limit_source"] = limit ? nlohmann::ordered_json(limit->source) : nlohmann::ordered_json();
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

}  // namespace hbmsim::sim
