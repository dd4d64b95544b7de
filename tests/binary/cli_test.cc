// End to end through the real binary: hbmsim gen and convert, as a user runs them.
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/binary/binary_test_util.h"

namespace hbmsim {
namespace {

using testing::FileBytes;

struct Ran {
  int code;
  std::string err;
};

std::string Temp(const std::string& name) {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/hbmsim_bin_" + t->name() + "_" + name;
}

Ran Hbmsim(const std::string& args) {
  const std::string err = Temp("stderr.txt");
  const std::string cmd = std::string(HBMSIM_BINARY) + " " + args + " >/dev/null 2>" + err;
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, FileBytes(err)};
}

TEST(Cli, GenIsByteIdenticalForTheSameSeed) {
  for (const std::string ext : {".trace", ".hbt", ".hbt.zst"}) {
    const std::string a = Temp("a" + ext), b = Temp("b" + ext), c = Temp("c" + ext);
    ASSERT_EQ(Hbmsim("gen churn --events 20000 --seed 5 -o " + a).code, 0);
    ASSERT_EQ(Hbmsim("gen churn --events 20000 --seed 5 -o " + b).code, 0);
    ASSERT_EQ(Hbmsim("gen churn --events 20000 --seed 6 -o " + c).code, 0);
    EXPECT_EQ(FileBytes(a), FileBytes(b)) << ext;
    EXPECT_NE(FileBytes(a), FileBytes(c)) << ext;
  }
}

TEST(Cli, ConvertRoundTripsByExtension) {
  const std::string text = Temp("t.trace"), bin = Temp("t.hbtz"), back = Temp("back.trace");
  ASSERT_EQ(Hbmsim("gen training --layers 3 --micro-batches 2 --recompute on --seed 2 -o " + text).code, 0);
  ASSERT_EQ(Hbmsim("convert " + text + " " + bin).code, 0);
  EXPECT_EQ(FileBytes(bin).substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  ASSERT_EQ(Hbmsim("convert " + bin + " " + back).code, 0);
  EXPECT_EQ(FileBytes(back), FileBytes(text));
}

TEST(Cli, TruncatedBinaryExitsTwoWithTheByteOffset) {
  const std::string text = Temp("t.trace"), bin = Temp("t.hbt"), cut = Temp("cut.hbt");
  ASSERT_EQ(Hbmsim("gen inference --seed 1 -o " + text).code, 0);
  ASSERT_EQ(Hbmsim("convert " + text + " " + bin).code, 0);
  const std::string bytes = FileBytes(bin);
  testing::WriteFileBytes(cut, bytes.substr(0, 100));
  const Ran r = Hbmsim("convert " + cut + " " + Temp("out.trace"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "hbmsim convert: " + cut + ": byte 100: truncated: the file ends inside a record\n");
}

}  // namespace
}  // namespace hbmsim
