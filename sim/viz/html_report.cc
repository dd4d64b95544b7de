#include "sim/viz/html_report.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/verdict.h"
#include "sim/viz/html_headline.h"
#include "sim/viz/memory_chart.h"
#include "sim/viz/reserved_chart.h"
#include "sim/viz/svg.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

constexpr std::string_view kStyle = R"(<style>
body { font-family: sans-serif; margin: 16px auto; max-width: 1240px; padding: 0 12px; color: #222; }
h1 { font-size: 20px; overflow-wrap: anywhere; }
p.headline { font-size: 20px; line-height: 1.4; margin: 8px 0 12px 0; padding: 10px 12px;
  background: #fff4f0; border-left: 6px solid #d62728; }
p.headline.fits { background: #f0fff4; border-left-color: #59a14f; }
div.wide { overflow-x: auto; max-width: 100%; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin: 8px 0 16px 0; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; font-size: 13px; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
pre.verdict { background: #f7f7f7; padding: 8px; }
td.key span, .key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
</style>
)";
// A replay with no memory limit runs with Bytes::Max(): say so, never "-1B".
std::string LimitText(Bytes limit) {
  return limit == Bytes::Max() ? "unlimited" : BytesText(static_cast<int64_t>(limit.value()));
}

std::string Row(std::string_view name, const std::string& value) {
  return fmt::format("<tr><th class=\"l\">{}</th><td>{}</td></tr>\n", name, Escape(value));
}

// "unlimited" for a stat with no bound, never "-1 B".
std::string LimitedBytesText(int64_t v) { return IsUnlimitedStat(v) ? "unlimited" : BytesText(v); }

std::string StatsTable(const ReplayReportInput& in) {
  const AllocatorStats s = in.allocator->GetStats();
  const ReplaySummary& sum = *in.summary;
  std::string out = "<table class=\"stats\">\n";
  out += Row("events replayed", fmt::format("{} of {}", sum.events_replayed, sum.events_read));
  out += Row("allocs", std::to_string(sum.allocs));
  out += Row("failures", std::to_string(sum.failures));
  out += Row("peak live requested", BytesText(static_cast<int64_t>(sum.peak_live_bytes.value())));
  out += Row("bytes_in_use (end)", BytesText(s.bytes_in_use));
  out += Row("peak_bytes_in_use", BytesText(s.peak_bytes_in_use));
  // bytes_reserved is the policy's own reservations (resident programs): shown
  // only when it holds any, so it is never read beside the pool as "reserved".
  if (s.bytes_reserved != 0) out += Row("program reservations (end)", BytesText(s.bytes_reserved));
  if (s.pool_bytes) out += Row("held from the device: pool_bytes (end)", LimitedBytesText(*s.pool_bytes));
  if (s.peak_pool_bytes) out += Row("peak_pool_bytes", LimitedBytesText(*s.peak_pool_bytes));
  out += Row("largest request that could succeed (end)", LimitedBytesText(s.largest_free_block_bytes));
  out += Row("bytes_limit", LimitedBytesText(StatBytes(in.bytes_limit)));
  for (const auto& [kind, n] : in.recorder->PolicyEventCounts()) out += Row(kind, std::to_string(n));
  return out + "</table>\n";
}

std::string FailureTable(const ReplayReportInput& in) {
  const std::vector<FailureRecord>& fs = in.recorder->failures();
  if (fs.empty()) return "<p>Every request fit.</p>\n";
  std::string out =
      "<div class=\"wide\"><table class=\"failures\">\n<tr><th>event</th><th class=\"l\">kind</th><th>id</th>"
      "<th>requested</th><th>rounded</th><th>free</th><th>largest request that could succeed</th>"
      "<th class=\"l\">tag</th><th class=\"l\">shape</th><th class=\"l\">after mark</th></tr>\n";
  for (size_t i = 0; i < std::min(fs.size(), kMaxListedFailures); ++i) {
    const FailureRecord& f = fs[i];
    const FailureLabels& labels = in.recorder->labels(i);
    out += fmt::format(
        "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
        f.event.value(), AllocStatusName(f.kind), f.id, f.requested.value(), f.rounded.value(),
        f.free_bytes.value(), f.largest_free_block_bytes.value(), Escape(labels.tag), Escape(labels.shape),
        Escape(in.recorder->program_mark_before(i)));
  }
  out += "</table></div>\n";
  if (in.recorder->failure_count() > kMaxListedFailures) {
    out += fmt::format("<p>… and {} more failures (see --json).</p>\n",
                       in.recorder->failure_count() - kMaxListedFailures);
  }
  return out;
}

// Two maps of the same memory (the peak just before the first failure) are drawn once.
bool SameMap(const AddressMap& a, const AddressMap& b) {
  if (a.regions != b.regions || a.blocks != b.blocks || a.total_bytes != b.total_bytes ||
      a.free_bytes != b.free_bytes || a.waste_bytes != b.waste_bytes || a.largest_free != b.largest_free ||
      a.region_starts != b.region_starts || a.cells.size() != b.cells.size()) {
    return false;
  }
  for (size_t i = 0; i < a.cells.size(); ++i) {
    const MapCell& x = a.cells[i];
    const MapCell& y = b.cells[i];
    if (x.begin != y.begin || x.end != y.end || x.state != y.state || x.bytes != y.bytes ||
        x.waste != y.waste || x.blocks != y.blocks || x.offset != y.offset) {
      return false;
    }
  }
  return true;
}

std::string MapSection(const AddressMap& m, const std::string& title) {
  if (!m.taken) return "";
  std::string out = fmt::format("<h2>Address space {}</h2>\n", Escape(title));
  out += fmt::format(
      "<p>{} region(s), {} block(s) over {}; free {}, largest free block in the map {}, rounding waste "
      "{}.</p>\n",
      m.regions, m.blocks, Escape(BytesText(static_cast<int64_t>(m.total_bytes))),
      Escape(BytesText(static_cast<int64_t>(m.free_bytes))),
      Escape(BytesText(static_cast<int64_t>(m.largest_free))),
      Escape(BytesText(static_cast<int64_t>(m.waste_bytes))));
  return out + "<div class=\"wide\">" + AddressMapSvg(m) + "</div>\n";
}

std::string MapSections(const VizRecorder& viz) {
  const AddressMap& failure = viz.first_failure_map();
  const AddressMap& peak = viz.peak_map();
  if (failure.taken && peak.taken && SameMap(failure, peak)) {
    return MapSection(failure, fmt::format("{}, the same as at the peak (event {})", failure.title, peak.event));
  }
  return MapSection(failure, failure.title) + MapSection(peak, peak.title);
}

std::string MapKey() {
  std::string out = "<p class=\"key\">";
  for (BlockState s :
       {BlockState::kInUse, BlockState::kPendingFree, BlockState::kProgram, BlockState::kFree}) {
    out += fmt::format("<span style=\"background:{}\"></span>{}", StateColour(s), BlockStateName(s));
  }
  out += fmt::format("<span style=\"background:{}\"></span>rounding waste (size − requested)", kWasteColour);
  // White, so outlined: reserved address space with no memory behind it (expandable segments, cuda_async).
  out += fmt::format("<span style=\"background:{};outline:1px solid #999\"></span>unmapped (reserved addresses, "
                     "no memory behind them)",
                     StateColour(BlockState::kUnmapped));
  return out +
         "; regions laid end to end, left to right, top to bottom; blocks under a pixel are merged.</p>\n";
}

}  // namespace

std::string HtmlReport(const VizRecorder& viz, const ReplayReportInput& in) {
  std::string out = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n";
  out += "<meta charset=\"utf-8\"/>\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += fmt::format("<title>hbmsim replay: {}</title>\n", Escape(in.trace));
  out += kStyle;
  out += "</head>\n<body>\n";
  out += fmt::format("<h1>hbmsim replay of {}</h1>\n", Escape(in.trace));
  // The answer first, in plain words; then the verdict with every byte count.
  out += fmt::format("<p class=\"headline{}\" id=\"verdict\">{}</p>\n",
                     in.recorder->failures().empty() ? " fits" : "", Escape(HeadlineText(in)));
  out += fmt::format("<p>allocator <b>{}</b> ({}), limit {} from {}.</p>\n", Escape(in.allocator->name()),
                     Escape(in.config != nullptr ? "options: " + ChangedOptionsText(*in.config) : ""),
                     Escape(LimitText(in.bytes_limit)), Escape(in.limit_source));
  out += "<pre class=\"verdict\">" + Escape(VerdictText(in) + FailingRequestText(in)) + "</pre>\n";
  out += ReservedSection(in);
  out += MemorySection(in);
  out += "<h2>Timeline</h2>\n<div class=\"wide\">" + TimelineSvg(viz.timeline()) + "</div>\n";
  out += "<p>Vertical lines: red failures, blue dashed defragmentations, orange dashed evictions.</p>\n";
  if (viz.first_failure_map().taken || viz.peak_map().taken) out += MapKey();
  out += MapSections(viz);
  out += "<h2>Stats</h2>\n" + StatsTable(in);
  out += "<h2>Failures</h2>\n" + FailureTable(in);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace hbmsim::sim::viz
