// End to end through the real binary: hbmsim gen and convert, as a user runs them.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

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

// A flipped bit that still decodes (96 MiB became 64 MiB) is caught by the end
// record's crc32: replay and convert exit 2 with one line naming its byte, and
// convert leaves no output.
TEST(Cli, CorruptBinaryExitsTwoWithTheChecksumsByteOffset) {
  const std::string bin = Temp("t.hbt"), bad = Temp("bad.hbt"), out = Temp("out.trace");
  ASSERT_EQ(Hbmsim("convert " + std::string(HBMSIM_SOURCE_DIR) + "/configs/examples/fragmentation.trace " + bin).code,
            0);
  std::string bytes = FileBytes(bin);
  const size_t at = bytes.find(std::string("\x80\x80\x80\x30", 4));  // 100663296 as a varint
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] = '\x20';  // 67108864: still a valid record
  testing::WriteFileBytes(bad, bytes);
  std::remove(out.c_str());  // left by an earlier run of this test
  const size_t end_record = bytes.size() - 4 - 2;  // 0F, a one-byte count, the crc32
  for (const std::string cmd : {"replay", "convert"}) {
    SCOPED_TRACE(cmd);
    const Ran r = Hbmsim(cmd + " " + bad + (cmd == "convert" ? " " + out : " --allocator bfc"));
    EXPECT_EQ(r.code, 2);
    const std::string head = "hbmsim " + cmd + ": " + bad + ": byte " + std::to_string(end_record) +
                             ": checksum mismatch: the end-of-trace record says 0x";
    EXPECT_EQ(r.err.substr(0, head.size()), head);
    EXPECT_TRUE(r.err.ends_with("; the file is corrupt\n")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  }
  EXPECT_NE(access(out.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace hbmsim
