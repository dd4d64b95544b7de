#include "sim/config/yaml_guard.h"

#include <algorithm>
#include <vector>

namespace hbmsim::sim {

int FirstTooDeepLine(std::string_view text, int max_depth) {
  std::vector<size_t> indents;
  int flow = 0;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t i = line.find_first_not_of(' ');
    if (i == std::string_view::npos || line[i] == '#') continue;
    while (!indents.empty() && indents.back() >= i) indents.pop_back();
    indents.push_back(i);
    int dashes = 0;
    while (i + 1 < line.size() && line[i] == '-' && line[i + 1] == ' ') {
      ++dashes;
      i = line.find_first_not_of(' ', i + 1);
      if (i == std::string_view::npos) break;
    }
    int deepest = flow;
    for (char c : line) {
      if (c == '[' || c == '{') deepest = std::max(deepest, ++flow);
      if ((c == ']' || c == '}') && flow > 0) --flow;
    }
    if (static_cast<int>(indents.size()) + dashes + deepest > max_depth) return line_no;
  }
  return 0;
}

}  // namespace hbmsim::sim
