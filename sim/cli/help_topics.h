// The pages `hbmsim help TOPIC` prints: the user's documentation of the
// repository (docs/*.md, docs/formats/*.md), compiled into the binary so the
// installed tool carries the manual of the version it is. The table is
// generated at configure time (cmake/HelpTopics.cmake); a page edited in
// docs/ reaches the binary on the next build.
#ifndef HBMSIM_SIM_CLI_HELP_TOPICS_H_
#define HBMSIM_SIM_CLI_HELP_TOPICS_H_

#include <span>
#include <string_view>

namespace hbmsim::sim::cli {

struct HelpTopic {
  std::string_view name;     // the file's name without .md: "text-trace", "cli"
  std::string_view path;     // where it lives in the repository: "docs/formats/text-trace.md"
  std::string_view title;    // its first heading, without the '#'
  std::string_view text;     // the whole page, as written
};

// Every topic, sorted by name.
std::span<const HelpTopic> HelpTopics();

}  // namespace hbmsim::sim::cli

#endif  // HBMSIM_SIM_CLI_HELP_TOPICS_H_
