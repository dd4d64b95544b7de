// Inputs built to exhaust memory, stack or time, run through the real hbmsim
// binary. Each must end the way every bad input ends: exit code 2, ONE line on
// stderr naming the file and where (line, byte offset, YAML line, option), and
// a peak RSS far below what the input declares. Big inputs are sparse files
// (truncate), so a 1 GB line costs neither disk nor time to write.
#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/hardening/child_process.h"
#include "tests/trace/pickle/pickle_bytes.h"

namespace hbmsim::testing {
namespace {

using namespace pickle_bytes;  // NOLINT: the opcode vocabulary of the pickle tests
using std::string_literals::operator""s;

// Far below any input the tests declare (10^12 events, 1 GB lines, 10^6
// levels) and above what hbmsim needs for small inputs, sanitizers included.
constexpr uint64_t kMaxRss = uint64_t{256} << 20;
constexpr char kHuge[] = "123456789012345678901234567890";  // 97 bits
constexpr uint64_t kGigabyte = 1000000000;

// Runs `args`; expects exit 2, exactly `message` on stderr, nothing on stdout.
void ExpectRefused(const std::string& args, const std::string& message, const Bounds& bounds = {}) {
  const BoundedRun r = RunBounded(args, bounds);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
  EXPECT_LT(r.peak_rss_bytes, kMaxRss) << args;
}

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = ScratchPath(name);
  WriteFile(path, bytes);
  return path;
}

// ---- pickle bombs (hbmsim replay SNAPSHOT) ----

// A block dict memoized once and listed 4000 times, in a segment memoized once
// and listed 4000 times: 1.6e7 blocks named by a 40 KB file. The reader's budget
// is the values the file holds, so it stops after a few thousand blocks.
TEST(PickleBombTest, SharedReferencesAreRefusedNotExpanded) {
  const size_t width = 4000;
  const std::string block = kEmptyDict + kMark + BinUnicode("size") + BinInt(512) + BinUnicode("state") +
                            BinUnicode("active_allocated") + kSetItems;
  std::string bytes = Proto(4) + block + kMemoize + "0";
  bytes += kEmptyList + kMemoize + kMark + Repeat(LongBinGet(0), width) + kAppends + "0";
  bytes += kEmptyDict + kMark + BinUnicode("address") + BinInt(0) + BinUnicode("total_size") +
           BinInt(512 * 4000) + BinUnicode("blocks") + LongBinGet(1) + kSetItems + kMemoize + "0";
  bytes += kEmptyDict + kMark + BinUnicode("segments") + kEmptyList + kMark + Repeat(LongBinGet(2), width) +
           kAppends + kSetItems + kStop;
  const std::string path = Write("memo_bomb.pickle", bytes);
  ExpectRefused("replay " + path + " --allocator torch",
                "hbmsim replay: " + path +
                    ": segments[0].blocks[14]: the snapshot names more segments, blocks and trace entries "
                    "than it holds values (shared references); refused");
}

// DUP copies the top of the stack: 4 bytes of input per million values.
TEST(PickleBombTest, DupFloodStaysWithinTheValueCap) {
  const std::string path =
      Write("dup.pickle", Proto(4) + kMark + kNone + std::string(1000000, '2') + "l" + kStop);
  ExpectRefused("replay " + path + " --allocator torch",
                "hbmsim replay: " + path + ": [0]: expected dict, found None");
}

TEST(PickleBombTest, AMillionNestedListsAreRefusedWithoutRecursion) {
  const size_t n = 1000000;
  const std::string path =
      Write("lists.pickle", Proto(2) + Repeat(kEmptyList, n) + Repeat(kAppend, n - 1) + kStop);
  ExpectRefused(
      "replay " + path + " --allocator torch",
      "hbmsim replay: " + path + ": byte 1001002: containers nest deeper than 1000 levels; refused");
}

TEST(PickleBombTest, AMillionNestedDictsAreRefusedWithoutRecursion) {
  const size_t n = 1000000;
  const std::string path =
      Write("dicts.pickle",
            Proto(2) + kEmptyDict + Repeat(BinUnicode("k") + kEmptyDict, n) + Repeat(kSetItem, n) + kStop);
  ExpectRefused(
      "replay " + path + " --allocator torch",
      "hbmsim replay: " + path + ": byte 7001003: containers nest deeper than 1000 levels; refused");
}

TEST(PickleBombTest, AMillionNestedTuplesAreRefusedWithoutRecursion) {
  const size_t n = 1000000;
  const std::string path = Write("tuples.pickle", Proto(2) + kNone + Repeat(Op(0x85), n) + kStop);  // TUPLE1
  ExpectRefused("replay " + path + " --allocator torch",
                "hbmsim replay: " + path + ": byte 1003: containers nest deeper than 1000 levels; refused");
}

TEST(PickleBombTest, AMillionOpenMarksAreRefused) {
  const std::string path = Write("marks.pickle", Proto(2) + Repeat(kMark, 1000000) + kStop);
  ExpectRefused("replay " + path + " --allocator torch",
                "hbmsim replay: " + path + ": byte 1002: more than 1000 MARKs open at once; refused");
}

TEST(PickleBombTest, AStringClaimingFourGigabytesIsRefusedBeforeItsBytes) {
  const std::string path = Write("claim.pickle", Proto(4) + "X" + LE(0xffffffffu, 4) + "abc");
  ExpectRefused(
      "replay " + path + " --allocator torch",
      "hbmsim replay: " + path + ": byte 2: BINUNICODE declares 4294967295 bytes but only 3 remain");
}

// ---- sizes past 64 bits ----

TEST(WideNumberTest, TextTraceSize) {
  const std::string path = Write("t.trace", fmt::format("alloc 1 16\nalloc 2 {}\n", kHuge));
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                fmt::format("hbmsim replay: {}:2: bad <bytes>: '{}' does not fit in 64 bits", path, kHuge));
}

TEST(WideNumberTest, RmmCsvSize) {
  const std::string path = Write("t.csv", fmt::format("Thread,Time,Action,Pointer,Size,Stream\n"
                                                      "1,08:21:48.312812,allocate,0x7f8b2a000000,{},0x0\n",
                                                      kHuge));
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                fmt::format("hbmsim replay: {}:2: bad size: '{}' does not fit in 64 bits", path, kHuge));
}

TEST(WideNumberTest, BfcDumpChunkSize) {
  const std::string path = Write(
      "dump.log",
      fmt::format("Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.0KiB (rounded to 1024)\n"
                  "BFCAllocator dump for GPU_0_bfc\n"
                  "Next region of size 2048\n"
                  "InUse at 7f0000000000 of size 1024 next 1\n"
                  "Free  at 7f0000000400 of size {} next 18446744073709551615\n",
                  kHuge));
  ExpectRefused("diagnose " + path,
                fmt::format("hbmsim diagnose: {}:5: number '{}' does not fit in 64 bits", path, kHuge));
}

TEST(WideNumberTest, BytesLimitOption) {
  ExpectRefused(
      fmt::format("replay configs/examples/fits.trace --allocator bfc --bytes-limit {}", kHuge),
      fmt::format("hbmsim replay: --bytes-limit {0}: '{0}' is not a size: '{0}' does not fit in 64 bits",
                  kHuge));
  ExpectRefused("replay configs/examples/fits.trace --allocator bfc --bytes-limit 99999999999GiB",
                "hbmsim replay: --bytes-limit 99999999999GiB: size '99999999999GiB' does not fit in 64 bits");
}

TEST(WideNumberTest, SetOption) {
  ExpectRefused(
      fmt::format(
          "replay configs/examples/fits.trace --allocator torch --bytes-limit 1GiB --set max_split_size={}",
          kHuge),
      fmt::format(
          "hbmsim replay: --set max_split_size={0}: '{0}' is not a size: '{0}' does not fit in 64 bits",
          kHuge));
  ExpectRefused(
      fmt::format(
          "replay configs/examples/fits.trace --allocator torch --bytes-limit 1GiB --set device_index={}",
          kHuge),
      fmt::format("hbmsim replay: --set device_index={0}: expected an integer, got '{0}'", kHuge));
}

TEST(WideNumberTest, YamlBytesLimit) {
  const std::string path =
      Write("c.yaml", fmt::format("allocator:\n  impl: bfc\n  bytes_limit: {}\n", kHuge));
  ExpectRefused(
      "replay configs/examples/fits.trace --allocator " + path,
      fmt::format(
          "hbmsim replay: {0}:3: allocator.bytes_limit: '{1}' is not a size: '{1}' does not fit in 64 bits",
          path, kHuge));
}

// ---- declared counts and nesting ----

const std::string kHbtHead = "\x89HBT\r\n\x1a\n\x01\x00"s;

TEST(DeclaredCountTest, BinaryTraceClaimingATrillionEntriesIn100Bytes) {
  std::string bytes = kHbtHead + "\x80\xa0\x94\xa5\x8d\x1d"s;  // varint 10^12 metadata entries
  while (bytes.size() < 100) bytes += "\x01k\x02vv";
  bytes.resize(100);
  const std::string path = Write("t.hbt", bytes);
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                "hbmsim replay: " + path + ": byte 100: truncated: the file ends inside a record");
}

TEST(DeclaredCountTest, BinaryTraceEndRecordClaimingATrillionEvents) {
  const std::string path = Write("end.hbt", kHbtHead + "\x00"s + "\x0f\x80\xa0\x94\xa5\x8d\x1d"s);
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                "hbmsim replay: " + path +
                    ": byte 11: the end-of-trace record counts 1000000000000 events but the file holds 0");
}

TEST(DeclaredCountTest, YamlWithAMillionNestedFlowLevels) {
  const size_t n = 1000000;
  const std::string path =
      Write("deep.yaml", "allocator:\n  impl: bfc\n  x: " + std::string(n, '[') + std::string(n, ']') + "\n");
  ExpectRefused("replay configs/examples/fits.trace --allocator " + path,
                "hbmsim replay: " + path + ":3: nesting deeper than 64 levels");
}

TEST(DeclaredCountTest, YamlWithDeepBlockNesting) {
  std::string text = "allocator:\n";
  for (int i = 1; i < 2000; ++i) text += std::string(i, ' ') + fmt::format("k{}:\n", i);
  const std::string path = Write("block.yaml", text);
  ExpectRefused("replay configs/examples/fits.trace --allocator " + path,
                "hbmsim replay: " + path + ":65: nesting deeper than 64 levels");
}

// ---- a 1 GB line with no newline ----

TEST(GigabyteLineTest, TextTraceFile) {
  const std::string path = SparseFile("line.trace", "alloc 1 ", kGigabyte);
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                "hbmsim replay: " + path + ":1: line longer than 1048576 bytes");
}

TEST(GigabyteLineTest, TextTraceOnStdin) {
  Bounds bounds;
  bounds.stdin_path = SparseFile("stdin.trace", "alloc 1 ", kGigabyte);
  ExpectRefused("replay /dev/stdin --allocator bfc --bytes-limit 1GiB",
                "hbmsim replay: /dev/stdin:1: line longer than 1048576 bytes", bounds);
}

TEST(GigabyteLineTest, RmmCsv) {
  const std::string path = SparseFile("line.csv", "Thread,Time,Action,Pointer,Size,Stream\n1,", kGigabyte);
  ExpectRefused("replay " + path + " --allocator bfc --bytes-limit 1GiB",
                "hbmsim replay: " + path + ":2: line longer than 4096 characters");
}

// A log line that long is skipped unread (a '\r' progress bar is one), so a
// log of nothing else holds no dump. Skipping reads through it, so the 1 GB
// variant is in the slow suite (gigabyte_log_slow_test.cc).
TEST(LongLineTest, BfcLogLineOf64MiB) {
  const std::string path = SparseFile("line.log", "InUse at 7f0000000000 of size ", uint64_t{64} << 20);
  ExpectRefused("diagnose " + path,
                "hbmsim diagnose: " + path + ": no BFC allocator dump found (1 lines, 1 not part of a dump)");
}

TEST(GigabyteLineTest, ConvertTextTrace) {
  const std::string path = SparseFile("convert.trace", "alloc 1 ", kGigabyte);
  ExpectRefused("convert " + path + " " + ScratchPath("out.hbt"),
                "hbmsim convert: " + path + ":1: line longer than 1048576 bytes");
}

}  // namespace
}  // namespace hbmsim::testing
