#include "trace/io/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/trace/io/io_test_util.h"
#include "trace/io/output_set.h"

namespace hbmsim::trace::io {
namespace {

using testing::Names;
using testing::ScratchDir;
using testing::Slurp;
using testing::Spit;

TEST(OutputFile, NothingIsAtThePathUntilCommit) {
  const std::string dir = ScratchDir();
  auto out = OutputFile::Create(dir + "/a.txt");
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)->Write("hello\n").ok());
  const std::set<std::string> during = Names(dir);
  ASSERT_EQ(during.size(), 1u);
  EXPECT_TRUE(during.begin()->starts_with(".a.txt.hbmsim-")) << *during.begin();
  ASSERT_TRUE((*out)->Commit().ok());
  EXPECT_EQ(Names(dir), std::set<std::string>{"a.txt"});
  EXPECT_EQ(Slurp(dir + "/a.txt"), "hello\n");
}

TEST(OutputFile, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a.txt", "the good report\n");
  {
    auto out = OutputFile::Create(dir + "/a.txt");
    ASSERT_TRUE(out.ok());
    (*out)->stream() << "half a rep";
  }
  EXPECT_EQ(Names(dir), std::set<std::string>{"a.txt"});
  EXPECT_EQ(Slurp(dir + "/a.txt"), "the good report\n");
}

TEST(OutputFile, ASymbolicLinkIsFollowedAndKept) {
  const std::string dir = ScratchDir();
  Spit(dir + "/real.txt", "old");
  ASSERT_EQ(::symlink("real.txt", (dir + "/link.txt").c_str()), 0);
  auto out = OutputFile::Create(dir + "/link.txt");
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Write("new").ok());
  ASSERT_TRUE((*out)->Commit().ok());
  struct stat st;
  ASSERT_EQ(::lstat((dir + "/link.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Slurp(dir + "/real.txt"), "new");
}

TEST(OutputFile, TheModeOfAnExistingFileIsKept) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a.sh", "old");
  ASSERT_EQ(::chmod((dir + "/a.sh").c_str(), 0750), 0);
  auto out = OutputFile::Create(dir + "/a.sh");
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Commit().ok());
  struct stat st;
  ASSERT_EQ(::stat((dir + "/a.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

TEST(OutputFile, UnwritablePathsFailAtCreate) {
  const std::string dir = ScratchDir();
  EXPECT_EQ((OutputFile::Create(dir + "/no/such/dir/x.json")).status().message(),
            "cannot write " + dir + "/no/such/dir/x.json: No such file or directory");
  EXPECT_EQ((OutputFile::Create(dir)).status().message(), "cannot write " + dir + ": Is a directory");
}

TEST(OutputFile, AFullDeviceIsAnErrorNamingThePath) {
  auto out = OutputFile::Create("/dev/full");
  ASSERT_TRUE(out.ok()) << out.status();
  (*out)->stream() << std::string(1 << 17, 'x');  // more than the buffer: the write happens now
  EXPECT_EQ((*out)->status().message(), "cannot write /dev/full: No space left on device");
  EXPECT_EQ((*out)->Commit().message(), "cannot write /dev/full: No space left on device");
}

TEST(OutputFile, DevNullIsWrittenInPlace) {
  auto out = OutputFile::Create("/dev/null");
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)->Write("gone").ok());
  EXPECT_TRUE((*out)->Commit().ok());
}

TEST(OutputSet, AnOutputThatIsAnInputIsRefusedBeforeAnythingIsCreated) {
  const std::string dir = ScratchDir();
  Spit(dir + "/t.trace", "alloc 1 8\n");
  auto set = OutputSet::Open({{"TRACE", dir + "/t.trace"}},
                             {{"--placements", dir + "/p.csv"}, {"--json", dir + "/./t.trace"}});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), "--json " + dir + "/./t.trace is the input TRACE " + dir +
                                        "/t.trace; refusing to overwrite it");
  EXPECT_EQ(Names(dir), std::set<std::string>{"t.trace"});
  EXPECT_EQ(Slurp(dir + "/t.trace"), "alloc 1 8\n");
}

TEST(OutputSet, ErrorsNameTheFlag) {
  const std::string dir = ScratchDir();
  auto set = OutputSet::Open({}, {{"--json", dir + "/nodir/x.json"}});
  EXPECT_EQ(set.status().message(), "--json: cannot write " + dir + "/nodir/x.json: No such file or directory");
}

TEST(OutputSet, CommitAllRenamesEveryFileAndAnAbandonedSetLeavesNothing) {
  const std::string dir = ScratchDir();
  {
    auto set = OutputSet::Open({}, {{"--a", dir + "/a"}, {"--b", dir + "/b"}, {"--c", ""}});
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(set->Get("--c"), nullptr);
    ASSERT_TRUE(set->Get("--a")->Write("A").ok());
  }
  EXPECT_TRUE(Names(dir).empty());
  auto set = OutputSet::Open({}, {{"--a", dir + "/a"}, {"--b", dir + "/b"}});
  ASSERT_TRUE(set.ok());
  ASSERT_TRUE(set->Get("--a")->Write("A").ok());
  ASSERT_TRUE(set->CommitAll().ok());
  EXPECT_EQ(Names(dir), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(Slurp(dir + "/a"), "A");
}

}  // namespace
}  // namespace hbmsim::trace::io
