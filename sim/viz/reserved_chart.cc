#include "sim/viz/reserved_chart.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/viz/svg.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

using Json = nlohmann::ordered_json;

// Colour-blind-safe (Okabe-Ito), so causes read apart from the held-bytes bars' palette.
constexpr std::array<std::string_view, 8> kCausePalette = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                                      "#56b4e9", "#d55e00", "#f0e442", "#999999"};

struct Part {
  std::string cause;
  uint64_t bytes = 0;
  std::string freed_by;  // who freed a part of free blocks: its top labels
};

bool IsByteCount(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() && j[key] >= 0;
}

// A part's "freed_by" rows as one cell: the first kFreedByShown labels with
// their bytes, then how many more; "" when the part has none.
constexpr size_t kFreedByShown = 3;
std::string FreedByCell(const Json& part) {
  if (!part.contains("freed_by") || !part["freed_by"].is_array()) return "";
  std::string out;
  size_t shown = 0, more = 0;
  for (const Json& f : part["freed_by"]) {
    if (!IsByteCount(f, "bytes")) continue;
    if (shown++ >= kFreedByShown) {
      ++more;
      continue;
    }
    out += fmt::format("{}{} {}", out.empty() ? "" : "; ", f.value("label", std::string("(unnamed)")),
                       HumanReadableNumBytes(Bytes(f["bytes"].get<uint64_t>())));
  }
  if (more > 0) out += fmt::format("; {} more", more);
  return out;
}

std::vector<Part> Parts(const Json& moment) {
  std::vector<Part> parts;
  for (const Json& p : moment.value("parts", Json::array())) {
    if (!IsByteCount(p, "bytes")) continue;
    parts.push_back({p.value("cause", std::string("(unnamed)")), p["bytes"].get<uint64_t>(), FreedByCell(p)});
  }
  return parts;
}

std::string Bar(const std::vector<Part>& parts, uint64_t reserved) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "class=\"reserved\">\n",
      kBarWidth, kBarHeight);
  double x = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double w = reserved == 0 ? 0 : kBarWidth * static_cast<double>(parts[i].bytes) / reserved;
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" data-bytes=\"{}\"><title>{}: "
        "{}"
        "</title></rect>\n",
        x, w, kBarHeight, kCausePalette[i % kCausePalette.size()], parts[i].bytes, Escape(parts[i].cause),
        Escape(HumanReadableNumBytes(Bytes(parts[i].bytes))));
    x += w;
  }
  return out + "</svg>\n";
}

std::string Legend(const std::vector<Part>& parts, uint64_t reserved) {
  std::string out =
      "<table class=\"reserved\">\n<tr><th></th><th class=\"l\">cause</th><th>bytes</th><th></th>"
      "<th>share</th><th class=\"l\">freed by</th></tr>\n";
  for (size_t i = 0; i < parts.size(); ++i) {
    const double share = reserved == 0 ? 0 : 100.0 * static_cast<double>(parts[i].bytes) / reserved;
    out += fmt::format(
        "<tr><td class=\"key\"><span style=\"background:{}\"></span></td><td class=\"l\">{}</td><td>{}</td>"
        "<td>{}</td><td>{:.1f}%</td><td class=\"l\">{}</td></tr>\n",
        kCausePalette[i % kCausePalette.size()], Escape(parts[i].cause), parts[i].bytes,
        Escape(HumanReadableNumBytes(Bytes(parts[i].bytes))), share, Escape(parts[i].freed_by));
  }
  return out + "</table>\n";
}

}  // namespace

std::string ReservedMoment(const std::string& title, const Json& moment) {
  if (!moment.is_object() || !moment.contains("reserved") || !moment["reserved"].is_number_integer() ||
      moment["reserved"] < 0) {
    return "";
  }
  const uint64_t reserved = moment["reserved"].get<uint64_t>();
  const std::vector<Part> parts = Parts(moment);
  uint64_t sum = 0;
  for (const Part& p : parts) sum += p.bytes;
  std::string out = fmt::format("<h3>{}: {} reserved</h3>\n", Escape(title),
                                Escape(HumanReadableNumBytes(Bytes(reserved))));
  out += Bar(parts, reserved) + Legend(parts, reserved);
  if (sum != reserved) {
    out += fmt::format("<p>The parts add up to {} B, not the {} B reserved.</p>\n", sum, reserved);
  }
  return out;
}

std::string ReservedSection(const ReplayReportInput& in) {
  const Json& r = in.reserved_explained;
  if (!r.is_object()) return "";
  std::string body;
  static constexpr std::array<std::pair<const char*, const char*>, 3> kMoments = {
      {{"first_failure", "At the first failure"}, {"peak", "At the peak"}, {"end", "At the end"}}};
  for (const auto& [key, title] : kMoments) {
    if (r.contains(key)) body += ReservedMoment(title, r[key]);
  }
  if (body.empty()) return "";
  return "<h2>Reserved, explained</h2>\n<p>What the allocator held from the device, by what made it hold "
         "it.</p>\n" +
         body;
}

}  // namespace hbmsim::sim::viz
