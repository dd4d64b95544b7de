#include "trace/io/path_identity.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/trace/io/io_test_util.h"

namespace hbmsim::trace::io {
namespace {

using testing::ScratchDir;
using testing::Spit;

std::string Check(const std::vector<NamedPath>& in, const std::vector<NamedPath>& out) {
  return std::string(CheckOutputsAreNotInputs(in, out).message());
}

TEST(PathIdentity, SymbolicAndHardLinksAreTheSameFile) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a.trace", "x");
  ASSERT_EQ(::symlink((dir + "/a.trace").c_str(), (dir + "/sym").c_str()), 0);
  ASSERT_EQ(::link((dir + "/a.trace").c_str(), (dir + "/hard").c_str()), 0);
  EXPECT_EQ(Check({{"IN", dir + "/a.trace"}}, {{"OUT", dir + "/sym"}}),
            "OUT " + dir + "/sym is the input IN " + dir + "/a.trace; refusing to overwrite it");
  EXPECT_EQ(Check({{"IN", dir + "/sym"}}, {{"OUT", dir + "/hard"}}),
            "OUT " + dir + "/hard is the input IN " + dir + "/sym; refusing to overwrite it");
}

TEST(PathIdentity, DifferentFilesAndNewFilesPass) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a", "x");
  Spit(dir + "/b", "x");
  EXPECT_EQ(Check({{"IN", dir + "/a"}}, {{"OUT", dir + "/b"}, {"--json", dir + "/new"}, {"--html", ""}}), "");
}

TEST(PathIdentity, TwoOutputsNamingOneFileAreRefused) {
  const std::string dir = ScratchDir();
  EXPECT_EQ(Check({}, {{"--json", dir + "/r"}, {"--html", dir + "/./r"}}),
            "--json and --html both write " + dir + "/r");
}

TEST(PathIdentity, DevStdinIsWhatFdZeroIs) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a", "x");
  // Redirect fd 0 to the file for the check, then put it back.
  const int saved = ::dup(0);
  FILE* f = std::fopen((dir + "/a").c_str(), "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(::dup2(::fileno(f), 0), 0);
  const std::string dev = Check({{"TRACE", "/dev/stdin"}}, {{"--json", dir + "/a"}});
  const std::string dash = Check({{"TRACE", "-"}}, {{"--json", dir + "/a"}});
  ::dup2(saved, 0);
  ::close(saved);
  std::fclose(f);
  EXPECT_EQ(dev, "--json " + dir + "/a is the input TRACE /dev/stdin; refusing to overwrite it");
  EXPECT_EQ(dash, "--json " + dir + "/a is the input TRACE -; refusing to overwrite it");
}

}  // namespace
}  // namespace hbmsim::trace::io
