// What every YAML input of hbmsim (allocator configs, sweep specs) passes
// before yaml-cpp sees it. yaml-cpp recurses once per nesting level, so a
// document of a few thousand `[` overflows the stack: the text is measured
// first, with a conservative estimate of its depth, and refused with the line
// that goes too deep.
#ifndef HBMSIM_SIM_CONFIG_YAML_GUARD_H_
#define HBMSIM_SIM_CONFIG_YAML_GUARD_H_

#include <string_view>

namespace hbmsim::sim {

// The first line whose nesting (indentation levels, plus `- ` markers opening
// the line, plus open flow brackets) exceeds `max_depth`; 0 when none does.
int FirstTooDeepLine(std::string_view text, int max_depth);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_CONFIG_YAML_GUARD_H_
