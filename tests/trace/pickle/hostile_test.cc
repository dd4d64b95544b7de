// Hostile and broken pickles: every one must come back as an error value that
// names the file, the byte and the reason, without crashing, hanging or
// allocating more than the input justifies.
#include <random>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "tests/trace/pickle/pickle_bytes.h"
#include "trace/pickle/unpickler.h"

namespace hbmsim {
namespace {

using namespace pickle_bytes;

std::string ErrorOf(const std::string& bytes, const UnpickleLimits& limits = {}) {
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "t.pickle", limits);
  if (tree.ok()) return "ok";
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(tree.status().message());
}

TEST(HostileTest, RefusesEveryOpcodeThatReachesForCode) {
  const struct {
    uint8_t op;
    const char* message;
  } kCases[] = {
      {'c', "t.pickle: byte 2: opcode GLOBAL imports code; refused"},
      {0x93, "t.pickle: byte 2: opcode STACK_GLOBAL imports code; refused"},
      {'R', "t.pickle: byte 2: opcode REDUCE calls code; refused"},
      {'b', "t.pickle: byte 2: opcode BUILD calls code; refused"},
      {'i', "t.pickle: byte 2: opcode INST calls code; refused"},
      {'o', "t.pickle: byte 2: opcode OBJ calls code; refused"},
      {0x81, "t.pickle: byte 2: opcode NEWOBJ calls code; refused"},
      {0x92, "t.pickle: byte 2: opcode NEWOBJ_EX calls code; refused"},
      {'P', "t.pickle: byte 2: opcode PERSID asks the loader for a persistent object; refused"},
      {'Q', "t.pickle: byte 2: opcode BINPERSID asks the loader for a persistent object; refused"},
      {0x82, "t.pickle: byte 2: opcode EXT1 imports code through the extension registry; refused"},
      {0x83, "t.pickle: byte 2: opcode EXT2 imports code through the extension registry; refused"},
      {0x84, "t.pickle: byte 2: opcode EXT4 imports code through the extension registry; refused"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(ErrorOf(Proto(4) + Op(c.op) + "\0\0\0\0\0.", {}), c.message);
  }
}

TEST(HostileTest, CPythonProtocol2BytesUseGlobalAndAreRefused) {
  // pickle.dumps({..., 'b': b'xy', ...}, protocol=2) spells bytes as _codecs.encode('xy', 'latin1').
  const std::string p2 =
      "80027d71002858010000006171015d7102284b018a09ffffffffffffffff004afbffffff473ff80000000000004e884b014b02"
      "86710365"
      "5801000000627104635f636f646563730a656e636f64650a710558020000007879710658060000006c6174696e317107867108"
      "5271"
      "09580100000063710a29580100000064710b4b0785710c580100000065710d4b014b024b0387710e5803000000626967710f8a"
      "0900"
      "000000000000004058030000006e656771108a080000000000000080752e";
  std::string bytes;
  for (size_t i = 0; i < p2.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(p2.substr(i, 2), nullptr, 16)));
  EXPECT_EQ(ErrorOf(bytes), "t.pickle: byte 63: opcode GLOBAL imports code; refused");
}

TEST(HostileTest, UnsupportedAndUnknownOpcodes) {
  EXPECT_EQ(
      ErrorOf(Proto(4) + "I1\n."),
      "t.pickle: byte 2: opcode INT is the protocol 0 text form, which snapshots never use; not supported");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0x8f) + "."),
            "t.pickle: byte 2: opcode EMPTY_SET builds a set, which snapshots never use; not supported");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0xff)), "t.pickle: byte 2: unknown opcode 0xff");
  EXPECT_EQ(ErrorOf(Proto(6) + "N."), "t.pickle: byte 0: pickle protocol 6 is not supported (only 2 to 5)");
  EXPECT_EQ(ErrorOf(Proto(1) + "N."), "t.pickle: byte 0: pickle protocol 1 is not supported (only 2 to 5)");
}

TEST(HostileTest, TruncationAtEveryOffsetOfARealFile) {
  absl::StatusOr<std::string> whole = ReadWholeFile(kSharedTorchSnapshots + "state_only_tiny.pickle");
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->size(), 3305u);
  ASSERT_TRUE(Unpickle(*whole, "tiny").ok());
  for (size_t n = 0; n < whole->size(); ++n) {
    absl::StatusOr<PickleTree> tree = Unpickle(whole->substr(0, n), "tiny");
    ASSERT_FALSE(tree.ok()) << "prefix of " << n << " bytes";
    ASSERT_TRUE(std::string(tree.status().message()).starts_with("tiny: byte ")) << tree.status();
  }
  EXPECT_EQ(ErrorOf(""), "t.pickle: byte 0: file ends before STOP");
  EXPECT_EQ(std::string(Unpickle(whole->substr(0, 1), "tiny").status().message()),
            "tiny: byte 0: PROTO needs 1 bytes of argument, only 0 remain");
  EXPECT_EQ(std::string(Unpickle(whole->substr(0, 5), "tiny").status().message()),
            "tiny: byte 2: FRAME needs 8 bytes of argument, only 2 remain");
  // The first frame declares 3294 bytes; cutting inside it is caught at FRAME.
  EXPECT_EQ(std::string(Unpickle(whole->substr(0, 100), "tiny").status().message()),
            "tiny: byte 2: FRAME declares 3294 bytes but only 89 remain");
}

TEST(HostileTest, MemoIndexOutOfRange) {
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + BinGet(5) + kStop),
            "t.pickle: byte 3: BINGET of memo entry 5, which was never stored");
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + kMemoize + LongBinGet(0xffffffff) + kStop),
            "t.pickle: byte 4: LONG_BINGET of memo entry 4294967295, which was never stored");
  // A sparse BINPUT leaves holes that a GET must not read.
  EXPECT_EQ(ErrorOf(Proto(2) + kEmptyList + BinPut(3) + BinGet(2) + kStop),
            "t.pickle: byte 5: BINGET of memo entry 2, which was never stored");
  EXPECT_EQ(ErrorOf(Proto(2) + kEmptyList + LongBinPut(0xfffffff0) + kStop),
            "t.pickle: byte 3: LONG_BINPUT to memo entry 4294967280, beyond any memo this file could fill");
  EXPECT_EQ(ErrorOf(Proto(4) + kMemoize + kStop),
            "t.pickle: byte 2: MEMOIZE needs 1 values on the stack, found 0");
}

TEST(HostileTest, DeclaredLengthsBeyondTheFile) {
  EXPECT_EQ(ErrorOf(Proto(4) + "X" + LE(0xffffffff, 4) + "abc."),
            "t.pickle: byte 2: BINUNICODE declares 4294967295 bytes but only 4 remain");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0x8d) + LE(uint64_t{1} << 62, 8) + "."),
            "t.pickle: byte 2: BINUNICODE8 declares 4611686018427387904 bytes but only 1 remain");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0x8c) + Op(10) + "ab."),
            "t.pickle: byte 2: SHORT_BINUNICODE declares 10 bytes but only 3 remain");
  EXPECT_EQ(ErrorOf(Proto(4) + Frame(uint64_t{1} << 40) + "N."),
            "t.pickle: byte 2: FRAME declares 1099511627776 bytes but only 2 remain");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0x8b) + LE(0x7fffffff, 4) + "."),
            "t.pickle: byte 2: LONG4 declares 2147483647 bytes but only 1 remain");
  EXPECT_EQ(ErrorOf(Proto(4) + Op(0x8b) + LE(0x80000000, 4) + "."),
            "t.pickle: byte 2: LONG4 with negative length");
  EXPECT_EQ(ErrorOf(Proto(2) + "T" + LE(0xfffffffe, 4) + "."),
            "t.pickle: byte 2: BINSTRING with negative length");
  EXPECT_EQ(ErrorOf(Proto(4) + "J\x01\x02"),
            "t.pickle: byte 2: BININT needs 4 bytes of argument, only 2 remain");
}

TEST(HostileTest, DeepNestingIsCappedWithoutRecursion) {
  const size_t n = 1'000'000;
  // A million lists, each appended into the one below it.
  EXPECT_EQ(ErrorOf(Proto(4) + Repeat(kEmptyList, n) + Repeat(kAppend, n - 1) + kStop),
            fmt::format("t.pickle: byte {}: containers nest deeper than 1000 levels; refused", 2 + n + 1000));
  // Exactly at the limit is fine.
  absl::StatusOr<PickleTree> at_limit =
      Unpickle(Proto(4) + Repeat(kEmptyList, 1001) + Repeat(kAppend, 1000) + kStop, "t");
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->Height(), 1000u);
  // Tuples nest without MARKs or memo.
  EXPECT_EQ(ErrorOf(Proto(4) + kNone + Repeat(Op(0x85), n) + kStop),
            "t.pickle: byte 1003: containers nest deeper than 1000 levels; refused");
  // A MARK bomb.
  EXPECT_EQ(ErrorOf(Proto(4) + Repeat(kMark, n) + kStop),
            "t.pickle: byte 1002: more than 1000 MARKs open at once; refused");
}

TEST(HostileTest, StackAndValueCaps) {
  UnpickleLimits limits;
  limits.max_stack = 100;
  EXPECT_EQ(ErrorOf(Proto(4) + Repeat(kNone, 200) + kStop, limits),
            "t.pickle: byte 102: more than 100 values on the stack; refused");
  limits = {};
  limits.max_values = 10;
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + kMark + Repeat(kNone, 20) + kAppends + kStop, limits),
            "t.pickle: byte 13: more than 10 values (nodes + elements); refused");
}

TEST(HostileTest, MemoBombStaysLinear) {
  // Level 0 is a list of 1000 Nones; level k is a list of 1000 references to
  // level k-1. Expanded, level 20 has 1000^21 leaves; as a tree it is 21 lists.
  const size_t width = 1000, levels = 20;
  std::string bytes = Proto(4) + kEmptyList + kMemoize + kMark + Repeat(kNone, width) + kAppends + "0";
  for (size_t k = 1; k <= levels; ++k) {
    bytes +=
        kEmptyList + kMemoize + kMark + Repeat(LongBinGet(static_cast<uint32_t>(k - 1)), width) + kAppends;
    bytes += "0";  // pop it from the stack; the memo keeps it
  }
  bytes += LongBinGet(levels) + kStop;
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "bomb");
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->NodeCount(), levels + 1 + width);
  EXPECT_EQ(tree->ElementCount(), (levels + 1) * width);
  EXPECT_EQ(tree->Height(), levels + 1);
  EXPECT_EQ(tree->root().size(), width);
  EXPECT_EQ(tree->root().at(0).id(), tree->root().at(999).id());
}

TEST(HostileTest, CyclesAreRefused) {
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + kMemoize + BinGet(0) + kAppend + kStop),
            "t.pickle: byte 6: APPEND puts a list inside itself (a cyclic object); refused");
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + "2" + kAppend + kStop),
            "t.pickle: byte 4: APPEND puts a list inside itself (a cyclic object); refused");
  // B takes A, then A is asked to take B.
  EXPECT_EQ(
      ErrorOf(Proto(4) + kEmptyList + kMemoize + kEmptyList + kMemoize + BinGet(0) + kAppend + "0" +
              BinGet(1) + kAppend + kStop),
      "t.pickle: byte 12: APPEND changes a list that is already inside another container (a cyclic object); "
      "refused");
}

TEST(HostileTest, StackDisciplineErrors) {
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyDict + kNone + kAppend + kStop),
            "t.pickle: byte 4: APPEND into a dict (expects a list)");
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyDict + kMark + kNone + kSetItems + kStop),
            "t.pickle: byte 5: SETITEMS with an odd number of values (1)");
  EXPECT_EQ(ErrorOf(Proto(4) + kEmptyList + kAppends + kStop), "t.pickle: byte 3: APPENDS without a MARK");
  EXPECT_EQ(ErrorOf(Proto(4) + kMark + kNone + kAppends + kStop),
            "t.pickle: byte 4: APPENDS has no container below its MARK");
  EXPECT_EQ(ErrorOf(Proto(4) + kNone + kMark + kNone + kTuple2 + kStop),
            "t.pickle: byte 5: TUPLE2 needs 2 values on the stack, found 1");
  EXPECT_EQ(ErrorOf(Proto(4) + kNone + kNone + kStop),
            "t.pickle: byte 4: STOP with 2 values on the stack (expects 1)");
  EXPECT_EQ(ErrorOf(Proto(4) + kNone + kMark + kStop), "t.pickle: byte 4: STOP with 1 MARKs still open");
  EXPECT_EQ(ErrorOf(Proto(4) + kStop), "t.pickle: byte 2: STOP with 0 values on the stack (expects 1)");
}

TEST(HostileTest, RandomByteFlipsNeverCrash) {
  absl::StatusOr<std::string> whole = ReadWholeFile(kSharedTorchSnapshots + "state_only_tiny.pickle");
  ASSERT_TRUE(whole.ok());
  const uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  size_t failures = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = *whole;
    for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    absl::StatusOr<PickleTree> tree = Unpickle(bytes, "flip");
    if (!tree.ok()) {
      ++failures;
      ASSERT_TRUE(std::string(tree.status().message()).starts_with("flip: byte "))
          << "seed " << seed << ": " << tree.status();
    }
  }
  // Most flips hit an opcode or a length; some only change a value.
  EXPECT_GT(failures, 100u) << "seed " << seed;
}

}  // namespace
}  // namespace hbmsim
