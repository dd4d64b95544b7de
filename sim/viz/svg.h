// Small helpers shared by the HTML report's SVG drawings.
#ifndef HBMSIM_SIM_VIZ_SVG_H_
#define HBMSIM_SIM_VIZ_SVG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "allocator/core/memory_map.h"
#include "sim/layer.h"

namespace hbmsim::sim::viz {

// Text made safe for HTML/XML content and attribute values.
std::string Escape(std::string_view s);
// "1.50GiB (1610612736 B)"
std::string BytesText(int64_t bytes);
std::string_view StateColour(BlockState s);
inline constexpr std::string_view kWasteColour = "#f28e2b";
// The size of one stacked bar of the report's charts (held bytes by group,
// reserved bytes by cause): one size, so the bars line up on the page.
inline constexpr int kBarWidth = 1000;
inline constexpr int kBarHeight = 28;

}  // namespace hbmsim::sim::viz

#endif  // HBMSIM_SIM_VIZ_SVG_H_
