// The timeline drawing of the HTML report (html_report.h).
#include <algorithm>
#include <array>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/viz/html_report.h"
#include "sim/viz/svg.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

constexpr int kPlotLeft = 70, kTop = 10, kPlotW = 1200, kPlotH = 320;
constexpr std::array<std::string_view, kSeriesCount> kSeriesColour = {"#59a14f", "#4e79a7", "#bab0ac",
                                                                      "#e15759"};
constexpr std::array<std::string_view, kMarkerKinds> kMarkerColour = {"#d62728", "#1f77b4", "#ff7f0e"};
constexpr std::array<std::string_view, kMarkerKinds> kMarkerName = {"failures", "defragmentations",
                                                                    "evictions"};

struct Scale {
  double per_column;
  int64_t top;
  double X(size_t c) const { return kPlotLeft + (c + 0.5) * per_column; }
  double Y(int64_t v) const { return kTop + kPlotH - static_cast<double>(v) / top * kPlotH; }
};

// One path per series: for each column a vertical stroke from its max to its
// min, joined to the next column, so the band reaches every peak.
std::string SeriesPath(const Timeline& t, const Scale& sc, int s) {
  std::string d;
  char op = 'M';
  for (size_t c = 0; c < t.columns().size(); ++c) {
    const Column& col = t.columns()[c];
    if (!col.sampled) continue;
    d += fmt::format("{}{:.1f} {:.1f}V{:.1f}", op, sc.X(c), sc.Y(col.max[s]), sc.Y(col.min[s]));
    op = 'L';
  }
  // The pool line is wide and pale under the others: bytes in use often equal
  // the pool bytes, and the in-use line must stay visible on top of it.
  const bool pool = s == kPoolBytes;
  return fmt::format(
      "<path class=\"series\" data-series=\"{}\" data-peak=\"{}\" fill=\"none\" stroke=\"{}\" "
      "stroke-width=\"{}\"{} d=\"{}\"><title>{} (peak {})</title></path>\n",
      SeriesName(s), t.Max(s), kSeriesColour[s], pool ? "5" : "1.5", pool ? " stroke-opacity=\"0.6\"" : "", d,
      SeriesName(s), Escape(BytesText(t.Max(s))));
}

std::string Markers(const Timeline& t, const Scale& sc) {
  std::string out;
  for (size_t c = 0; c < t.columns().size(); ++c) {
    for (int k = 0; k < kMarkerKinds; ++k) {
      const uint32_t n = t.columns()[c].markers[k];
      if (n == 0) continue;
      const uint64_t first = c * t.events_per_column();
      out += fmt::format(
          "<line class=\"marker\" data-kind=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" "
          "stroke=\"{}\" stroke-width=\"1\" stroke-dasharray=\"{}\"><title>{} {} in events "
          "{}..{}</title></line>\n",
          kMarkerName[k], sc.X(c), sc.X(c), kTop + 4 * k, kTop + kPlotH, kMarkerColour[k],
          k == 0 ? "" : "4 2", n, kMarkerName[k], first, first + t.events_per_column() - 1);
    }
  }
  return out;
}

std::string Axes(const Timeline& t, const Scale& sc) {
  std::string out =
      fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfbfb\" stroke=\"#999\"/>\n",
                  kPlotLeft, kTop, kPlotW, kPlotH);
  for (int i = 0; i <= 4; ++i) {
    const int64_t v = sc.top / 4 * i;
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
                       kPlotLeft - 4, sc.Y(v) + 4, HumanReadableNumBytes(v));
  }
  const uint64_t events = t.events();
  for (int i = 0; i <= 4; ++i) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                       kPlotLeft + kPlotW * i / 4, kTop + kPlotH + 14, events * i / 4);
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">event index ({} "
      "event(s) per column, min/max per column)</text>\n",
      kPlotLeft + kPlotW / 2, kTop + kPlotH + 30, t.events_per_column());
  return out;
}

std::string Legend(const Timeline& t) {
  std::string out;
  int x = kPlotLeft;
  for (int s = 0; s < kSeriesCount; ++s, x += 300) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "font-size=\"12\">{} peak {}</text>\n",
        x, kTop + kPlotH + 40, kSeriesColour[s], x + 16, kTop + kPlotH + 50, SeriesName(s),
        HumanReadableNumBytes(t.Max(s)));
  }
  return out;
}

}  // namespace

std::string TimelineSvg(const Timeline& t) {
  int64_t top = 1;
  for (int s = 0; s < kSeriesCount; ++s) top = std::max(top, t.Max(s));
  const double columns = static_cast<double>(
      std::max<uint64_t>(1, (t.events() + t.events_per_column() - 1) / t.events_per_column()));
  const Scale sc{kPlotW / columns, top + top / 20};
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n",
      kPlotLeft + kPlotW + 10, kTop + kPlotH + 60);
  out += Axes(t, sc);
  // Drawn bottom to top: the pool first, then the largest free block, the bytes in use, the live requests.
  for (int s : {kPoolBytes, kLargestFree, kBytesInUse, kLiveRequested}) out += SeriesPath(t, sc, s);
  out += Markers(t, sc);
  out += Legend(t);
  out += "</svg>\n";
  return out;
}

}  // namespace hbmsim::sim::viz
