#include "sim/viz/memory_chart.h"

#include <algorithm>
#include <array>
#include <vector>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/viz/svg.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

// Groups drawn one by one; the rest share one grey segment.
constexpr size_t kGroupsDrawn = 8;
// Colour-blind-safe qualitative palette (Tableau 10 without its grey).
constexpr std::array<std::string_view, kGroupsDrawn> kGroupPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                                 "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
constexpr std::string_view kRestColour = "#bab0ac";

// The grouping that says most: tags; the top user frame when nothing is tagged.
std::pair<std::string_view, const std::vector<MemoryGroup>*> Grouping(const MemoryBreakdown& m) {
  if (NothingTagged(m.by_tag) && !m.by_frame.empty()) return {"top user frame", &m.by_frame};
  return {"tag", &m.by_tag};
}

struct Segment {
  std::string key;
  uint64_t bytes = 0, buffers = 0;
  std::string_view colour;
};

std::vector<Segment> Segments(const std::vector<MemoryGroup>& groups) {
  std::vector<Segment> out;
  Segment rest{"", 0, 0, kRestColour};
  for (size_t i = 0; i < groups.size(); ++i) {
    // A lone last group is drawn itself rather than as "1 more group".
    if (i < kGroupsDrawn || (i == kGroupsDrawn && groups.size() == kGroupsDrawn + 1)) {
      out.push_back({groups[i].key, groups[i].bytes, groups[i].buffers,
                     i < kGroupsDrawn ? kGroupPalette[i] : kRestColour});
    } else {
      rest.bytes += groups[i].bytes;
      rest.buffers += groups[i].buffers;
    }
  }
  if (rest.bytes > 0 || rest.buffers > 0) {
    rest.key = fmt::format("({} more groups)", groups.size() - kGroupsDrawn);
    out.push_back(rest);
  }
  return out;
}

std::string Bar(const std::vector<Segment>& segments, uint64_t total) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "class=\"groups\">\n",
      kBarWidth, kBarHeight);
  double x = 0;
  for (const Segment& s : segments) {
    const double w = total == 0 ? 0 : kBarWidth * static_cast<double>(s.bytes) / static_cast<double>(total);
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" data-bytes=\"{}\"><title>{}: {}"
        "</title></rect>\n",
        x, w, kBarHeight, s.colour, s.bytes, Escape(s.key), Escape(HumanReadableNumBytes(Bytes(s.bytes))));
    x += w;
  }
  return out + "</svg>\n";
}

std::string Legend(const std::vector<Segment>& segments, uint64_t total) {
  std::string out = "<table class=\"groups\">\n<tr><th></th><th class=\"l\">group</th><th>bytes</th><th></th>"
                    "<th>share</th><th>buffers</th></tr>\n";
  for (const Segment& s : segments) {
    const double share = total == 0 ? 0 : 100.0 * static_cast<double>(s.bytes) / static_cast<double>(total);
    out += fmt::format(
        "<tr><td class=\"key\"><span style=\"background:{}\"></span></td><td class=\"l\">{}</td><td>{}</td>"
        "<td>{}</td><td>{:.1f}%</td><td>{}</td></tr>\n",
        s.colour, Escape(s.key), s.bytes, Escape(HumanReadableNumBytes(Bytes(s.bytes))), share, s.buffers);
  }
  return out + "</table>\n";
}

bool SameGroups(const std::vector<MemoryGroup>& a, const std::vector<MemoryGroup>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const MemoryGroup& x, const MemoryGroup& y) {
    return x.key == y.key && x.bytes == y.bytes && x.buffers == y.buffers;
  });
}

// The peak is often the moment just before the first failure, holding the
// same buffers: then one section says both.
bool SameHeld(const MemoryBreakdown& a, const MemoryBreakdown& b) {
  return a.held_bytes == b.held_bytes && a.held_buffers == b.held_buffers && SameGroups(a.by_tag, b.by_tag) &&
         SameGroups(a.by_frame, b.by_frame);
}

// `also`: the other moment this one stands for (", the same as at the peak (event 420)").
std::string Moment(std::string_view title, const MemoryBreakdown& m, const std::string& also = "") {
  const auto [by, groups] = Grouping(m);
  std::string out =
      fmt::format("<h3>{} (event {}){}: {} held in {} buffers, by {}</h3>\n", Escape(title), m.event.value(),
                  Escape(also), Escape(HumanReadableNumBytes(Bytes(m.held_bytes))), m.held_buffers, by);
  if (groups->empty()) return out + "<p>nothing was held.</p>\n";
  const std::vector<Segment> segments = Segments(*groups);
  return out + Bar(segments, m.held_bytes) + Legend(segments, m.held_bytes);
}

}  // namespace

std::string MemorySection(const ReplayReportInput& in) {
  std::string out;
  if (in.attribution != nullptr) {
    const std::optional<MemoryBreakdown>& failure = in.attribution->AtFirstFailure();
    const std::optional<MemoryBreakdown> peak = in.attribution->AtPeak();
    if (failure || peak) out += "<h2>Where the memory went</h2>\n";
    if (failure && peak && SameHeld(*failure, *peak)) {
      out += Moment("At the first failure", *failure,
                    fmt::format(", the same as at the peak (event {})", peak->event.value()));
    } else {
      if (failure) out += Moment("At the first failure", *failure);
      if (peak) out += Moment("At the peak", *peak);
    }
  }
  if (!in.advice_text.empty()) out += "<h2>What would fit</h2>\n<pre>" + Escape(in.advice_text) + "</pre>\n";
  return out;
}

}  // namespace hbmsim::sim::viz
