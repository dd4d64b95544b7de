// Issue 18, item 6 through the real binary: a trace of every format replays
// the same from a file, a pipe into `-`, a pipe into /dev/stdin and a FIFO;
// `diagnose` reads a piped log once.
#include <sys/stat.h>

#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

struct Format {
  std::string name;
  std::string file;  // under the source tree
  std::string args;  // the replay's allocator and limit
};

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"text", "configs/examples/fragmentation.trace", "--allocator bfc --bytes-limit 256MiB"},
      {"hbt", "tests/data/hbt_v1/fragmentation.hbt", "--allocator bfc --bytes-limit 256MiB"},
      {"hbt_zst", "tests/data/hbt_v1/fragmentation.hbt.zst", "--allocator bfc --bytes-limit 256MiB"},
      {"torch_pickle", "tests/fuzz/corpus/torch_snapshot/trim-cs336_ctx128_forward.pickle", "--allocator torch"},
      {"rmm", "tests/data/rmm/two_streams.csv", "--allocator bfc --bytes-limit 1GiB"},
      {"stalloc", "tests/data/stalloc/mem_log_dev1.txt", "--allocator bfc --bytes-limit 64GiB"},
      {"csapp", "tests/data/csapp/realloc_moves.rep", "--allocator bfc --bytes-limit 1GiB"},
      {"xla_proto", "tests/data/xla/heap-trace.hlo_proto.pb", "--allocator bfc --bytes-limit 1GiB"},
  };
  return formats;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

void PrintTo(const Format& f, std::ostream* os) { *os << f.name; }

class EverySource : public ::testing::TestWithParam<Format> {};

TEST_P(EverySource, PipesFifosDashAndDevStdinReplayLikeTheFile) {
  const Format& f = GetParam();
  const std::string dir = TestDir();
  const std::string file = Source(f.file);
  const Result direct = Hbmsim(dir, fmt::format("replay {} {}", file, f.args));
  ASSERT_LE(direct.exit_code, 1) << direct.err;
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> ways = {
      {"-", fmt::format("cat {} | $HBMSIM replay - {}", file, f.args)},
      {"/dev/stdin", fmt::format("cat {} | $HBMSIM replay /dev/stdin {}", file, f.args)},
      {"fifo", fmt::format("(cat {} > fifo &) ; $HBMSIM replay fifo {}", file, f.args)},
  };
  for (const auto& [name, line] : ways) {
    SCOPED_TRACE(line);
    const Result r = Shell(dir, line);
    EXPECT_EQ(r.exit_code, direct.exit_code) << r.err;
    std::string expected = Replace(direct.out, file, name);
    // STAlloc names the device in the file name only (mem_log_dev1.txt): a stream has none, so device 0.
    if (f.name == "stalloc") {
      expected = Replace(Replace(expected, " on device 1 with ", " on device 0 with "), "(device 1,", "(device 0,");
    }
    EXPECT_EQ(r.out, expected);
    EXPECT_EQ(r.err, Replace(direct.err, file, name));
  }
}

INSTANTIATE_TEST_SUITE_P(Safety, EverySource, ::testing::ValuesIn(Formats()),
                         [](const ::testing::TestParamInfo<Format>& p) { return p.param.name; });

TEST(Sources, ConvertReadsAPipedBinaryTrace) {
  const std::string dir = TestDir();
  const std::string file = Source("tests/data/hbt_v1/fragmentation.hbt.zst");
  ASSERT_EQ(Hbmsim(dir, fmt::format("convert {} direct.trace", file)).exit_code, 0);
  const Result r = Shell(dir, fmt::format("cat {} | $HBMSIM convert - piped.trace", file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(dir + "/piped.trace"), Slurp(dir + "/direct.trace"));
}

TEST(Sources, DiagnoseReadsAPipedLogOnce) {
  const std::string dir = TestDir();
  // A log with a BFC dump and a remat warning: both need the whole input.
  const std::string bfc = Slurp(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/20.txt");
  Spit(dir + "/job.log", Slurp(Source("tests/data/xla/remat.log")) + bfc);
  const Result direct = Hbmsim(dir, "diagnose job.log");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_NE(direct.out.find("fragmentation"), std::string::npos);
  const Result piped = Shell(dir, "cat job.log | $HBMSIM diagnose -");
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, Replace(direct.out, "job.log", "<stdin>"));  // what messages call `-`
}

}  // namespace
}  // namespace hbmsim::testing
