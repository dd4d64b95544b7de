#include "trace/io/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/trace/io/io_test_util.h"

namespace hbmsim::trace::io {
namespace {

using testing::ScratchDir;
using testing::Slurp;
using testing::Spit;

TEST(InputFile, ARegularFileIsReadInPlace) {
  const std::string dir = ScratchDir();
  Spit(dir + "/t", "abc");
  auto in = OpenInputFile(dir + "/t");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->spooled());
  EXPECT_EQ(in->path(), dir + "/t");
  EXPECT_EQ(in->name(), dir + "/t");
}

TEST(InputFile, AFifoIsSpooledOnceAndReadableByPathAgainAndAgain) {
  const std::string dir = ScratchDir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string bytes = std::string("\x80\x02") + std::string(300000, 'z');  // binary, bigger than a pipe
  std::thread writer([&] { Spit(fifo, bytes); });
  auto in = OpenInputFile(fifo);
  writer.join();
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->spooled());
  EXPECT_TRUE(in->path().starts_with("/proc/self/fd/")) << in->path();
  EXPECT_EQ(Slurp(in->path()), bytes);
  EXPECT_EQ(Slurp(in->path()), bytes);  // a second pass sees it all again
  EXPECT_EQ(in->Rename(in->path() + ":3: bad"), fifo + ":3: bad");
  EXPECT_EQ(testing::Names(dir), std::set<std::string>{"fifo"});  // the spool has no name
}

// Issue 48, item 3: `hbmsim replay /dev/zero` wrote to $TMPDIR until the disk was full.
TEST(InputFile, AnEndlessPipeStopsAtTheCap) {
  ASSERT_EQ(::setenv("HBMSIM_PIPE_LIMIT", "1MiB", 1), 0);
  auto in = OpenInputFile("/dev/zero");
  ASSERT_FALSE(in.ok());
  const char* tmp = std::getenv("TMPDIR");
  EXPECT_EQ(
      in.status().message(),
      std::string("cannot read /dev/zero: more than 1048576 B (1.00MiB) piped in, the most spooled to ") +
          (tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
          "; give it as a file, or raise the cap with HBMSIM_PIPE_LIMIT=SIZE");
  // Exactly the cap is still read.
  const std::string dir = ScratchDir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { Spit(fifo, std::string(1 << 20, 'z')); });
  auto exact = OpenInputFile(fifo);
  writer.join();
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(Slurp(exact->path()).size(), size_t{1} << 20);
  ASSERT_EQ(::setenv("HBMSIM_PIPE_LIMIT", "lots", 1), 0);
  EXPECT_EQ(OpenInputFile("/dev/zero").status().message(),
            "HBMSIM_PIPE_LIMIT=lots: not a size in bytes (e.g. 64GiB)");
  ASSERT_EQ(::unsetenv("HBMSIM_PIPE_LIMIT"), 0);
  EXPECT_EQ(kDefaultPipeLimit, uint64_t{4} << 30);
}

TEST(InputFile, DirectoriesAndMissingFilesAreErrors) {
  const std::string dir = ScratchDir();
  EXPECT_EQ(OpenInputFile(dir).status().message(), dir + " is a directory");
  EXPECT_EQ(OpenInputFile(dir + "/none").status().message(),
            "cannot read " + dir + "/none: No such file or directory");
}

TEST(InputFile, DashIsStandardInput) {
  const std::string dir = ScratchDir();
  Spit(dir + "/a", "alloc 1 8\n");
  const int saved = ::dup(0);
  FILE* f = std::fopen((dir + "/a").c_str(), "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(::dup2(::fileno(f), 0), 0);
  auto in = OpenInputFile("-");
  ::dup2(saved, 0);
  ::close(saved);
  std::fclose(f);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->name(), "<stdin>");
  EXPECT_EQ(Slurp(in->path()), "alloc 1 8\n");
}

}  // namespace
}  // namespace hbmsim::trace::io
