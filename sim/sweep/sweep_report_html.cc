// The sweep summary as one self-contained HTML page (no network, no
// scripts): the summary table, then per configuration a bar for the share
// of jobs that fit and, for size rows, the limit needed (median, p90, max)
// drawn to one scale so configurations compare at a glance.
#include <algorithm>
#include <string>

#include "fmt/format.h"
#include "sim/sweep/sweep_report.h"

namespace hbmsim::sim::sweep {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Label(const SummaryRow& r) {
  std::string label = r.allocator + " " + (r.settings.empty() ? "(as configured)" : r.settings) + " " + r.question;
  if (!r.bytes_limit.empty()) label += " @" + r.bytes_limit;
  return label;
}

std::string GiB(uint64_t bytes) { return fmt::format("{:.2f}GiB", static_cast<double>(bytes) / (1 << 30)); }

constexpr int kLabelWidth = 420;
constexpr int kBarWidth = 460;
constexpr int kRowHeight = 22;

// One bar per row: the fraction of jobs that fit.
std::string FitChart(const SweepSummary& s) {
  std::string svg = fmt::format("<svg width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">",
                                kLabelWidth + kBarWidth + 80, kRowHeight * s.rows.size() + 10);
  int y = 5;
  for (const SummaryRow& r : s.rows) {
    const double share = r.jobs == 0 ? 0 : static_cast<double>(r.fit) / r.jobs;
    svg += fmt::format("<text x=\"0\" y=\"{}\">{}</text>", y + 15, Escape(Label(r)));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"#ddd\"/>", kLabelWidth, y, kBarWidth);
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" fill=\"#3a7\"/>", kLabelWidth, y,
                       share * kBarWidth);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}/{}</text>", kLabelWidth + kBarWidth + 6, y + 13, r.fit, r.jobs);
    y += kRowHeight;
  }
  return svg + "</svg>";
}

// Size rows: max as the light bar, p90 darker, median darkest, one scale.
std::string NeedChart(const SweepSummary& s) {
  uint64_t scale = 1;
  int rows = 0;
  for (const SummaryRow& r : s.rows) {
    if (auto m = r.Percentile(1.0)) {
      scale = std::max(scale, *m);
      ++rows;
    }
  }
  if (rows == 0) return "<p>No size rows: the sweep asked no `size: true`.</p>";
  std::string svg = fmt::format("<svg width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">",
                                kLabelWidth + kBarWidth + 220, kRowHeight * rows + 10);
  int y = 5;
  for (const SummaryRow& r : s.rows) {
    if (!r.Percentile(1.0)) continue;
    svg += fmt::format("<text x=\"0\" y=\"{}\">{}</text>", y + 15, Escape(Label(r)));
    const char* colours[] = {"#bcd", "#69b", "#247"};
    const double ps[] = {1.0, 0.9, 0.5};
    for (int i = 0; i < 3; ++i) {
      const double w = static_cast<double>(*r.Percentile(ps[i])) / static_cast<double>(scale) * kBarWidth;
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" fill=\"{}\"/>", kLabelWidth, y, w,
                         colours[i]);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\">median {} p90 {} max {}</text>", kLabelWidth + kBarWidth + 6,
                       y + 13, GiB(*r.Percentile(0.5)), GiB(*r.Percentile(0.9)), GiB(*r.Percentile(1.0)));
    y += kRowHeight;
  }
  return svg + "</svg>";
}

}  // namespace

std::string SummaryHtml(const SweepSummary& s) {
  std::string page =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>hbmsim sweep report</title><style>"
      "body{font-family:sans-serif;margin:24px}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,td:nth-child(2){text-align:left}"
      "</style></head><body>";
  page += fmt::format("<h1>hbmsim sweep report</h1><p>{}: {} task results</p>", Escape(s.dir), s.lines);
  page += "<h2>Jobs that fit</h2>" + FitChart(s);
  page += "<h2>Limit needed (size rows: median, p90, max)</h2>" + NeedChart(s);
  page += "<h2>Summary</h2><pre>" + Escape(SummaryText(s)) + "</pre>";
  return page + "</body></html>\n";
}

}  // namespace hbmsim::sim::sweep
