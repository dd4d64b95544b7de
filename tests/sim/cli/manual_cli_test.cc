// What a user has before reading anything: `hbmsim --version`, the manual
// (`hbmsim help [TOPIC]`), the bash completion and a named unknown command.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/sim/cli/cli_test_util.h"

namespace hbmsim::testing {
namespace {

std::string RepoFile(const std::string& path) { return ReadFile(std::string(HBMSIM_SOURCE_DIR) + "/" + path); }

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST(ManualCliTest, VersionIsTheRepositorysVersionFile) {
  CliRun r = RunHbmsim("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hbmsim " + Trimmed(RepoFile("VERSION")) + "\n");
  EXPECT_EQ(r.err, "");
}

TEST(ManualCliTest, HelpListsEveryUserPageWithItsHeading) {
  CliRun r = RunHbmsim("help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("hbmsim help TOPIC prints one of these pages", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n  text-trace "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  torch-snapshot "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  what-if "), std::string::npos) << r.out;
  // The developers' pages are not the user's manual.
  EXPECT_EQ(r.out.find("  contributing "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  fuzzing "), std::string::npos) << r.out;
}

TEST(ManualCliTest, HelpTopicPrintsThePageAsWritten) {
  CliRun r = RunHbmsim("help text-trace");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, RepoFile("docs/formats/text-trace.md"));
  EXPECT_EQ(RunHbmsim("help what-if").out, RepoFile("docs/what-if.md"));
}

TEST(ManualCliTest, UnknownTopicIsOneLineNamingTheTopics) {
  CliRun r = RunHbmsim("help nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("hbmsim help: no topic 'nope' (topics: bfc-dump, binary-trace, ", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(ManualCliTest, UnknownCommandIsNamed) {
  CliRun r = RunHbmsim("frobnicate x.trace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "hbmsim: unknown command 'frobnicate' (commands: advise, compare, completion, convert, diagnose, gen, "
            "help, inspect, presets, replay, scale, size, sweep; see hbmsim --help)\n");
}

// Runs the completion function as bash would after the user typed `words`
// (the last one being completed) and returns what it offers, one per line.
std::string Complete(const std::string& script, const std::string& words) {
  const std::string driver = TempPath("complete.sh");
  WriteFile(driver, "source " + script + "\nCOMP_WORDS=(" + words +
                        ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_hbmsim\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n");
  const std::string out = TempPath("complete.out");
  const std::string command = "bash " + driver + " > " + out + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << ReadFile(out);
  return ReadFile(out);
}

TEST(ManualCliTest, BashCompletionOffersCommandsFlagsPoliciesAndTopics) {
  const std::string script = TempPath("hbmsim.bash");
  CliRun r = RunHbmsim("completion bash -o " + script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Complete(script, "hbmsim re"), "replay\n");
  EXPECT_EQ(Complete(script, "hbmsim replay x.trace --bytes-"), "--bytes-limit\n");
  EXPECT_EQ(Complete(script, "hbmsim size x.trace --allocator to"), "torch\n");
  EXPECT_EQ(Complete(script, "hbmsim help torch-"), "torch-model\ntorch-snapshot\n");
  EXPECT_EQ(RunHbmsim("completion bash").out, ReadFile(script));
}

TEST(ManualCliTest, CompletionForAnotherShellIsRefused) {
  CliRun r = RunHbmsim("completion zsh");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("hbmsim completion: SHELL: zsh not in {bash}", 0), 0u) << r.err;
}

}  // namespace
}  // namespace hbmsim::testing
