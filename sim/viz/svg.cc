#include "sim/viz/svg.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control bytes are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string BytesText(int64_t bytes) { return fmt::format("{} ({} B)", HumanReadableNumBytes(bytes), bytes); }

std::string_view StateColour(BlockState s) {
  switch (s) {
    case BlockState::kFree:
      return "#d9d9d9";
    case BlockState::kInUse:
      return "#4e79a7";
    case BlockState::kPendingFree:
      return "#9c755f";
    case BlockState::kProgram:
      return "#b07aa1";
    case BlockState::kUnmapped:
      return "#ffffff";
  }
  return "#000000";
}

}  // namespace hbmsim::sim::viz
