// The address-map drawing of the HTML report (html_report.h): the strip of
// AddressMap::kUnits units wrapped into rows of kRowUnits pixels.
#include <algorithm>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/viz/html_report.h"
#include "sim/viz/svg.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

constexpr uint64_t kRowUnits = 1100;
constexpr int kMapLeft = 10, kRowH = 18, kRowGap = 4;

int RowY(uint64_t row) { return 10 + static_cast<int>(row) * (kRowH + kRowGap); }

// Draws units [begin, end) in `colour`, split where the strip wraps.
std::string Span(uint64_t begin, uint64_t end, std::string_view colour, int y_off, int h,
                 const std::string& title) {
  std::string out;
  while (begin < end) {
    const uint64_t row = begin / kRowUnits;
    const uint64_t stop = std::min(end, (row + 1) * kRowUnits);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n",
                       kMapLeft + begin % kRowUnits, RowY(row) + y_off, stop - begin, h, colour, title);
    begin = stop;
  }
  return out;
}

std::string CellTitle(const MapCell& c) {
  if (c.blocks > 1) {
    return fmt::format("<title>{} blocks from {:#x}, {} (mostly {})</title>", c.blocks, c.offset,
                       HumanReadableNumBytes(static_cast<int64_t>(c.bytes)), BlockStateName(c.state));
  }
  return fmt::format("<title>{} at {:#x}: {}, waste {}</title>", BlockStateName(c.state), c.offset,
                     HumanReadableNumBytes(static_cast<int64_t>(c.bytes)),
                     HumanReadableNumBytes(static_cast<int64_t>(c.waste)));
}

// The waste of a single held block is drawn as the lower third of its tail,
// in proportion to size − requested (at least one pixel when there is any).
// A single block 3 px or wider leaves its last pixel blank, so neighbouring
// blocks of the same state read as separate blocks.
std::string Cell(const MapCell& c) {
  const uint64_t units = c.end - c.begin;
  const uint64_t end = c.blocks == 1 && units >= 3 ? c.end - 1 : c.end;
  std::string out = Span(c.begin, end, StateColour(c.state), 0, kRowH, CellTitle(c));
  if (c.waste == 0 || c.bytes == 0) return out;
  const uint64_t w = std::max<uint64_t>(1, units * c.waste / c.bytes);
  out += Span(end - std::min(w, end - c.begin), end, kWasteColour, kRowH * 2 / 3, kRowH - kRowH * 2 / 3, "");
  return out;
}

}  // namespace

std::string AddressMapSvg(const AddressMap& m) {
  const uint64_t rows = AddressMap::kUnits / kRowUnits;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"address-map\" data-blocks=\"{0}\" "
      "data-cells=\"{1}\" width=\"{2}\" height=\"{3}\" viewBox=\"0 0 {2} {3}\">\n",
      m.blocks, m.cells.size(), kMapLeft * 2 + kRowUnits, RowY(rows) + 4);
  for (uint64_t r = 0; r < rows; ++r) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#ccc\"/>\n",
                       kMapLeft, RowY(r), kRowUnits, kRowH);
  }
  for (const MapCell& c : m.cells) out += Cell(c);
  // Region starts: a dark tick, so separate device allocations read as such.
  for (uint64_t u : m.region_starts) out += Span(u, u + 1, "#000000", -2, kRowH + 4, "");
  out += "</svg>\n";
  return out;
}

}  // namespace hbmsim::sim::viz
