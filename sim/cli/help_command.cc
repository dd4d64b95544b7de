// `hbmsim help [TOPIC]`: the manual that came with this binary. Without a
// topic it lists them (the command reference is `hbmsim COMMAND --help`);
// with one it prints that page of docs/ as written, so the answer to "what
// does this format hold" needs neither the repository nor a network.
#include <memory>
#include <string>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/cli/help_topics.h"
#include "sim/layer.h"
#include "trace/io/output_file.h"

namespace hbmsim::sim::cli {
namespace {

std::string TopicList() {
  std::string out =
      "hbmsim help TOPIC prints one of these pages (hbmsim COMMAND --help lists a command's flags):\n\n";
  size_t width = 0;
  for (const HelpTopic& topic : HelpTopics()) width = std::max(width, topic.name.size());
  for (const HelpTopic& topic : HelpTopics()) {
    out += fmt::format("  {:<{}}  {}\n", topic.name, width, topic.title);
  }
  return out;
}

const HelpTopic* FindTopic(const std::string& name) {
  for (const HelpTopic& topic : HelpTopics()) {
    if (topic.name == name) return &topic;
  }
  return nullptr;
}

class HelpCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("TOPIC", topic_, "the page to print (none: list the pages)");
  }

  int Run() override {
    if (topic_.empty()) return Print(TopicList());
    const HelpTopic* topic = FindTopic(topic_);
    if (topic == nullptr) {
      std::string names;
      for (const HelpTopic& t : HelpTopics()) names += (names.empty() ? "" : ", ") + std::string(t.name);
      PrintError(fmt::format("hbmsim help: no topic '{}' (topics: {})", OneLineMessage(topic_), names));
      return kExitBadInput;
    }
    return Print(std::string(topic->text));
  }

 private:
  static int Print(const std::string& text) {
    if (absl::Status s = io::WriteStdout(text); !s.ok()) {
      PrintError(fmt::format("hbmsim help: {}", std::string(s.message())));
      return kExitBadInput;
    }
    return kExitOk;
  }

  std::string topic_;
};

const CommandRegistration kHelp("help", "print a page of the manual: the formats, the CLI contract, the models",
                                []() -> std::unique_ptr<Command> { return std::make_unique<HelpCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
