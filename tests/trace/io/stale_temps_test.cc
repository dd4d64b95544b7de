// Issue 48, item 4: a temporary a SIGKILLed run left beside its output is
// removed by the next write to that folder, and only when it is ours (our
// naming, our user) and its writer is gone (no such pid, no flock held).
#include "trace/io/stale_temps.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/trace/io/io_test_util.h"
#include "trace/io/output_file.h"

namespace hbmsim::trace::io {
namespace {

using testing::Names;
using testing::ScratchDir;
using testing::Slurp;
using testing::Spit;

// A pid no process has: a child that has exited and been reaped.
pid_t GonePid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(StaleTemps, TheWriterIsReadFromTheName) {
  EXPECT_EQ(TempFileWriter(".r.json.hbmsim-4242-Ab12Cd"), pid_t{4242});
  EXPECT_EQ(TempFileWriter(".a.hbmsim-1.hbmsim-77-zzzzzz"), pid_t{77});  // the last marker counts
  EXPECT_EQ(TempFileWriter(".r.json.hbmsim-Ab12Cd"), std::nullopt);      // older runs: no pid
  EXPECT_EQ(TempFileWriter("r.json.hbmsim-4242-Ab12Cd"), std::nullopt);  // not hidden: a user's file
  EXPECT_EQ(TempFileWriter(".r.json.hbmsim--1-Ab12Cd"), std::nullopt);
  EXPECT_EQ(TempFileWriter(".r.json.hbmsim-12x-Ab12Cd"), std::nullopt);
  EXPECT_EQ(TempFileWriter(".r.json.hbmsim-4242-Ab12C"), std::nullopt);  // 5 random characters
  EXPECT_EQ(TempFileTemplate("out", "r.json"), fmt::format("out/.r.json.hbmsim-{}-XXXXXX", ::getpid()));
}

TEST(StaleTemps, OnlyOursWhoseWriterIsGoneAreRemovedOnTheNextWrite) {
  const std::string dir = ScratchDir();
  const std::string stale = fmt::format(".r.json.hbmsim-{}-Ab12Cd", GonePid());
  const std::string live = fmt::format(".r.json.hbmsim-{}-Ef34Gh", ::getppid());  // ctest, alive
  const std::string old_style = ".r.json.hbmsim-Ij56Kl";                          // no pid: unknown writer
  const std::string users = "r.json.hbmsim-1-Mn78Op";                             // not hidden: not ours
  for (const std::string& name : {stale, live, old_style, users}) Spit(dir + "/" + name, "half a report");
  auto out = OutputFile::Create(dir + "/other.csv");
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)->Write("a,b\n").ok());
  ASSERT_TRUE((*out)->Commit().ok());
  EXPECT_EQ(Names(dir), (std::set<std::string>{live, old_style, users, "other.csv"}));
  EXPECT_EQ(Slurp(dir + "/" + live), "half a report");
}

TEST(StaleTemps, AWriterHoldingItsLockIsLeftAloneWhateverItsPid) {
  // Another host's writer: its pid means nothing here, its flock does.
  const std::string dir = ScratchDir();
  const std::string path = fmt::format("{}/.r.json.hbmsim-{}-Ab12Cd", dir, GonePid());
  Spit(path, "being written");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_EQ(RemoveStaleTempFiles(dir), 0);
  ::close(fd);
  EXPECT_EQ(RemoveStaleTempFiles(dir), 1);
  EXPECT_EQ(Names(dir), std::set<std::string>{});
}

TEST(StaleTemps, ANewTemporaryNamesItsWriter) {
  const std::string dir = ScratchDir();
  auto out = OutputFile::Create(dir + "/a.txt");
  ASSERT_TRUE(out.ok()) << out.status();
  const std::set<std::string> during = Names(dir);
  ASSERT_EQ(during.size(), 1u);
  EXPECT_EQ(TempFileWriter(*during.begin()), ::getpid()) << *during.begin();
  // Our own temporary, alive, survives another output's cleanup.
  EXPECT_EQ(RemoveStaleTempFiles(dir), 0);
  EXPECT_EQ(Names(dir), during);
}

}  // namespace
}  // namespace hbmsim::trace::io
