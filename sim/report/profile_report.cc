#include "sim/report/profile_report.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using xplane::AllocatorSummary;

constexpr size_t kTopOps = 12;  // rows of the by-op table in text
constexpr int kSlices = 10;     // rows of the over-time table

std::string Seconds(int64_t ps) { return fmt::format("{:.6f} s", static_cast<double>(ps) / 1e12); }
std::string Frag(const std::optional<double>& f) { return f ? fmt::format("{:.6g}", *f) : "-"; }

std::string PeakLine(const xplane::ProfileDevice& dev, const AllocatorSummary& s) {
  if (s.peak_at_start) {
    return fmt::format("  peak in the recording: {} ({}), already in use when it began\n", s.peak_bytes,
                       HumanReadableNumBytes(s.peak_bytes));
  }
  const xplane::MemoryRecord& r = dev.recording.records[s.peak_record];
  return fmt::format(
      "  peak in the recording: {} ({}) at t={}, after record {} (allocation of {} bytes by {})\n",
      s.peak_bytes, HumanReadableNumBytes(s.peak_bytes), Seconds(s.series[s.peak_record].time_ps),
      s.peak_record, dev.start.records[s.peak_record].chunk_bytes,
      r.tf_op.empty() ? std::string(xplane::kNoOp) : r.tf_op);
}

// The state at the end of each of kSlices equal slices of the recording's
// time: the slice's end and the last reading at or before it. The row shows
// the slice's end, not the reading's time: an allocator idle through the last
// tenths would otherwise show the same instant on several rows.
struct Slice {
  int64_t until_ps = 0;
  const xplane::SeriesPoint* state = nullptr;
};
std::vector<Slice> Slices(const AllocatorSummary& s) {
  std::vector<Slice> out;
  if (s.series.empty()) return out;
  const int64_t span = std::max<int64_t>(s.end_ps - s.start_ps, 1);
  size_t i = 0;
  for (int k = 1; k <= kSlices; ++k) {
    const int64_t until = s.start_ps + span * k / kSlices;
    while (i + 1 < s.series.size() && s.series[i + 1].time_ps <= until) ++i;
    out.push_back({until, &s.series[i]});
  }
  return out;
}

std::string AllocatorText(const xplane::ProfileDevice& dev, const AllocatorSummary& s) {
  std::string out = fmt::format("\n{}: {} allocations, {} deallocations from t={} to t={}", s.name,
                                s.allocations, s.deallocations, Seconds(s.start_ps), Seconds(s.end_ps));
  out += s.limit ? fmt::format("; limit {} ({})\n", *s.limit, HumanReadableNumBytes(*s.limit)) : "\n";
  out += fmt::format("  in use before the recording: {} ({})", dev.start.bytes_in_use_before,
                     HumanReadableNumBytes(dev.start.bytes_in_use_before));
  if (s.recorded_peak) {
    out += fmt::format("; peak_bytes_in_use recorded: {} ({}){}", *s.recorded_peak,
                       HumanReadableNumBytes(*s.recorded_peak),
                       *s.recorded_peak > s.peak_bytes ? ", reached before the recording began" : "");
  }
  out += "\n" + PeakLine(dev, s);
  out += "  in use at that peak, by tf_op:\n           bytes  chunks  tf_op\n";
  for (size_t i = 0; i < s.at_peak.size() && i < kTopOps; ++i) {
    const xplane::OpBytes& o = s.at_peak[i];
    out += fmt::format("    {:>12}  {:>6}  {}\n", o.bytes,
                       o.chunks == 0 ? std::string("-") : std::to_string(o.chunks), o.op);
  }
  if (s.at_peak.size() > kTopOps) out += fmt::format("    ... {} more ops\n", s.at_peak.size() - kTopOps);
  out += fmt::format("  BFC's fragmentation (1 - largest free chunk / free bytes of the pool): max {}",
                     Frag(s.max_fragmentation));
  if (s.max_fragmentation)
    out += fmt::format(" at t={}", Seconds(s.series[s.max_fragmentation_record].time_ps));
  out +=
      fmt::format(", at the end {}\n", Frag(s.series.empty() ? std::nullopt : s.series.back().fragmentation));
  out +=
      "  over time (the state at the end of each tenth of the recording):\n"
      "                   t        in use  fragmentation\n";
  for (const Slice& slice : Slices(s)) {
    out += fmt::format("    {:>16}  {:>12}  {}\n", Seconds(slice.until_ps), slice.state->bytes_in_use,
                       Frag(slice.state->fragmentation));
  }
  return out;
}

// One SVG polyline per curve, scaled to [0, w] x [0, h].
std::string Curve(const AllocatorSummary& s, bool fragmentation, const char* color) {
  constexpr double w = 800, h = 160;
  double top = 0;
  for (const xplane::SeriesPoint& p : s.series) {
    top = std::max(top, fragmentation ? p.fragmentation.value_or(0) : static_cast<double>(p.bytes_in_use));
  }
  if (top <= 0) top = 1;
  const double span = static_cast<double>(std::max<int64_t>(s.end_ps - s.start_ps, 1));
  std::string pts;
  for (const xplane::SeriesPoint& p : s.series) {
    const double v = fragmentation ? p.fragmentation.value_or(0) : static_cast<double>(p.bytes_in_use);
    pts += fmt::format("{:.1f},{:.1f} ", static_cast<double>(p.time_ps - s.start_ps) / span * w,
                       h - v / top * h);
  }
  return fmt::format(
      "<svg width=\"{}\" height=\"{}\" style=\"border:1px solid #ccc\"><polyline fill=\"none\" stroke=\"{}\" "
      "points=\"{}\"/></svg><div>{}: max {}</div>\n",
      w, h, color, pts, fragmentation ? "fragmentation" : "bytes in use",
      fragmentation ? Frag(s.max_fragmentation) : std::to_string(static_cast<int64_t>(top)));
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string RenderProfileText(const xplane::ProfileTrace& t, const std::vector<AllocatorSummary>& s) {
  std::string out =
      fmt::format("Profile {} ({}, {}): {} allocator{}\n", t.source, t.form,
                  t.framework == Framework::kUnknown ? "framework unknown" : FrameworkName(t.framework),
                  s.size(), s.size() == 1 ? "" : "s");
  for (size_t d = 0; d < s.size(); ++d) out += AllocatorText(t.devices[d], s[d]);
  return out;
}

nlohmann::ordered_json RenderProfileJson(const xplane::ProfileTrace& t,
                                         const std::vector<AllocatorSummary>& s) {
  nlohmann::ordered_json j;
  j["source"] = t.source;
  j["form"] = t.form;
  j["framework"] = FrameworkName(t.framework);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t d = 0; d < s.size(); ++d) {
    const AllocatorSummary& a = s[d];
    nlohmann::ordered_json o;
    o["allocator_name"] = a.name;
    o["device"] = d;
    o["allocations"] = a.allocations;
    o["deallocations"] = a.deallocations;
    if (a.limit) o["limit"] = *a.limit;
    o["bytes_in_use_before"] = t.devices[d].start.bytes_in_use_before;
    o["peak_bytes"] = a.peak_bytes;
    o["peak_record"] = a.peak_at_start ? nlohmann::ordered_json() : nlohmann::ordered_json(a.peak_record);
    if (a.recorded_peak) o["recorded_peak_bytes_in_use"] = *a.recorded_peak;
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const xplane::OpBytes& b : a.at_peak)
      ops.push_back({{"tf_op", b.op}, {"bytes", b.bytes}, {"chunks", b.chunks}});
    o["at_peak_by_tf_op"] = ops;
    if (a.max_fragmentation) o["max_fragmentation"] = *a.max_fragmentation;
    nlohmann::ordered_json series = nlohmann::ordered_json::array();
    for (const xplane::SeriesPoint& p : a.series) {
      series.push_back(
          {p.time_ps, p.bytes_in_use,
           p.fragmentation ? nlohmann::ordered_json(*p.fragmentation) : nlohmann::ordered_json()});
    }
    o["series_time_ps_in_use_fragmentation"] = series;
    list.push_back(o);
  }
  j["allocators"] = list;
  return j;
}

std::string RenderProfileHtml(const xplane::ProfileTrace& t, const std::vector<AllocatorSummary>& s) {
  std::string out = fmt::format(
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>hbmsim diagnose {}</title></head>"
      "<body style=\"font-family:sans-serif\"><h1>{}</h1><p>{} ({})</p>\n",
      Escape(t.source), Escape(t.source), Escape(t.form), Escape(std::string(FrameworkName(t.framework))));
  for (size_t d = 0; d < s.size(); ++d) {
    const AllocatorSummary& a = s[d];
    out += fmt::format("<h2>{}</h2><pre>{}</pre>\n", Escape(a.name), Escape(AllocatorText(t.devices[d], a)));
    out += Curve(a, false, "#1f77b4") + Curve(a, true, "#d62728");
    out += "<table><tr><th>bytes</th><th>chunks</th><th>tf_op at the peak</th></tr>\n";
    for (const xplane::OpBytes& o : a.at_peak) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", o.bytes, o.chunks, Escape(o.op));
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace hbmsim::sim
