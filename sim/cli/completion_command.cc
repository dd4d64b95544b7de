// `hbmsim completion bash [-o FILE]`: a bash completion script made from the
// command line itself (MakeCommandLine), so it offers exactly the commands
// and flags the parser takes, the policies for --allocator and the manual's
// topics for `help`. The first command of the README installs it to
// share/bash-completion/completions/hbmsim; by hand:
//   source <(hbmsim completion bash)
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/cli/command_line.h"
#include "sim/cli/command.h"
#include "sim/cli/help_topics.h"
#include "sim/cli/version.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "trace/io/output_file.h"

namespace hbmsim::sim::cli {
namespace {

// "--bytes-limit --json -o --output ...": every name of every option of `app`.
std::string FlagsOf(const CLI::App& app) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
  }
  return fmt::format("{}", fmt::join(flags, " "));
}

std::string BashScript(const CommandLine& line) {
  std::vector<std::string> names;
  std::string cases;
  for (const auto& [sub, command] : line.commands) {
    names.push_back(sub->get_name());
    cases += fmt::format("    {}) flags=\"{}\" ;;\n", sub->get_name(), FlagsOf(*sub));
  }
  std::vector<std::string> policies;
  for (const PolicySpec& spec : BuiltinPolicies().policies()) policies.push_back(spec.name);
  std::vector<std::string> topics;
  for (const HelpTopic& topic : HelpTopics()) topics.emplace_back(topic.name);
  return fmt::format(R"(# bash completion for hbmsim {version}, written by `hbmsim completion bash`.
_hbmsim() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} flags=""
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "{commands} --help --version" -- "$cur"))
    return
  fi
  case ${{COMP_WORDS[1]}} in
{cases}  esac
  if [[ ${{COMP_WORDS[1]}} == help ]] && ((COMP_CWORD == 2)); then
    COMPREPLY=($(compgen -W "{topics}" -- "$cur"))
  elif [[ $prev == --allocator ]]; then
    COMPREPLY=($(compgen -W "{policies}" -- "$cur") $(compgen -f -X '!*.y*ml' -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -o bashdefault -F _hbmsim hbmsim
)",
                     fmt::arg("version", kVersion), fmt::arg("commands", fmt::join(names, " ")),
                     fmt::arg("cases", cases), fmt::arg("topics", fmt::join(topics, " ")),
                     fmt::arg("policies", fmt::join(policies, " ")));
}

class CompletionCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("SHELL", shell_, "the shell to complete for (bash)")->required()->check(CLI::IsMember({"bash"}));
    app.add_option("-o,--output", out_, "write the script to this file instead of standard output");
  }

  int Run() override {
    const std::string script = BashScript(*MakeCommandLine());
    absl::Status status = out_.empty() ? io::WriteStdout(script) : WriteFile(script);
    if (!status.ok()) {
      PrintError(fmt::format("hbmsim completion: {}", OneLineMessage(std::string(status.message()))));
      return kExitBadInput;
    }
    return kExitOk;
  }

 private:
  absl::Status WriteFile(const std::string& script) const {
    absl::StatusOr<std::unique_ptr<io::OutputFile>> out = io::OutputFile::Create(out_);
    if (!out.ok()) return out.status();
    (*out)->stream() << script;
    return (*out)->Commit();
  }

  std::string shell_;
  std::string out_;
};

const CommandRegistration kCompletion(
    "completion", "print a shell completion script for hbmsim (bash)",
    []() -> std::unique_ptr<Command> { return std::make_unique<CompletionCommand>(); });

}  // namespace
}  // namespace hbmsim::sim::cli
