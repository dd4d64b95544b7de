// The pickle writer's bytes are what CPython writes for the same values, and
// they read back through our unpickler and through python3's pickle.load.
#include "trace/pickle/pickle_writer.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "trace/pickle/unpickler.h"
#include "trace/text/utf8.h"

namespace hbmsim {
namespace {

std::string Hex(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

TEST(PickleWriter, SmallDictIsCPythonsBytes) {
  PickleWriter w;
  w.BeginDict();
  w.String("k");
  w.Int(1);
  w.EndDict();
  // CPython: PROTO 4, EMPTY_DICT, MARK, SHORT_BINUNICODE 'k', BININT1 1, SETITEMS, STOP (no FRAME, no memo).
  EXPECT_EQ(Hex(w.Finish()), "80047d288c016b4b01752e");
}

// Issue 48: a frame name from a corrupted recording is written as U+FFFD, so Python's unpickler
// (which refuses a BINUNICODE that is not UTF-8) still loads the snapshot.
TEST(PickleWriter, BytesThatAreNotUtf8AreReplaced) {
  PickleWriter w;
  w.String("a\xff\xe2\x82z");  // a stray byte, then a sequence cut short
  // SHORT_BINUNICODE of 'a' U+FFFD U+FFFD U+FFFD 'z': each byte that starts no sequence is one U+FFFD.
  EXPECT_EQ(Hex(w.Finish()), "80048c0b61efbfbdefbfbdefbfbd7a2e");
  EXPECT_EQ(ReplaceInvalidUtf8("ok \xc3\xa9 \xed\xa0\x80"),
            "ok \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

// A shared list is memoized once and then fetched: [[1], <the same list>].
TEST(PickleWriter, SharedListIsMemoizedAndFetched) {
  PickleWriter w;
  w.BeginList();
  w.BeginList();
  w.Int(1);
  EXPECT_EQ(w.EndListShared(), 0u);
  w.Get(0);
  w.EndList();
  const std::string bytes = w.Finish();
  // EMPTY_LIST MARK EMPTY_LIST MARK BININT1 1 APPENDS MEMOIZE BINGET 0 APPENDS STOP
  EXPECT_EQ(Hex(bytes), "80045d285d284b0165946800652e");
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "shared.pickle");
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(tree->root().size(), 2u);
  EXPECT_EQ(tree->root().at(1).at(0).AsInt64(), 1);
  EXPECT_EQ(tree->root().at(0).id(), tree->root().at(1).id());  // one node, referenced twice
}

TEST(PickleWriter, IntegersUseTheShortestOpcode) {
  auto bytes = [](int64_t v) {
    PickleWriter w;
    w.Int(v);
    return Hex(w.Finish());
  };
  EXPECT_EQ(bytes(255), "80044bff2e");
  EXPECT_EQ(bytes(256), "80044d00012e");
  EXPECT_EQ(bytes(-1), "80044affffffff2e");
  EXPECT_EQ(bytes(int64_t{1} << 31), "80048a0500000080002e");  // 2^31 needs a 5th byte for the sign
  EXPECT_EQ(bytes(-(int64_t{1} << 31) - 1), "80048a05ffffff7fff2e");
  PickleWriter w;
  w.UInt(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Hex(w.Finish()), "80048a09ffffffffffffffff002e");
}

// Everything the writer can express, with > 1000 items to cross a batch.
std::string Mixed() {
  PickleWriter w;
  w.BeginDict();
  w.String("ints");
  w.BeginList();
  for (int64_t v : {int64_t{0}, int64_t{65535}, int64_t{65536}, int64_t{INT32_MIN}, int64_t{INT32_MAX},
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    w.Int(v);
  }
  w.UInt(std::numeric_limits<uint64_t>::max());
  w.EndList();
  w.String("long_string");
  w.String(std::string(300, 'x'));
  w.String("flags");
  w.BeginTuple2();
  w.Bool(true);
  w.Bool(false);
  w.EndTuple2();
  w.String("none");
  w.None();
  w.String("float");
  w.Float(-1.5);
  w.String("many");
  w.BeginList();
  for (int i = 0; i < 2500; ++i) w.Int(i);
  w.EndList();
  w.EndDict();
  return w.Finish();
}

TEST(PickleWriter, RoundTripsThroughOurUnpickler) {
  absl::StatusOr<PickleTree> tree = Unpickle(Mixed(), "mixed");
  ASSERT_TRUE(tree.ok()) << tree.status();
  const PickleValue root = tree->root();
  ASSERT_EQ(root.size(), 6u);
  const PickleValue ints = *root.Find("ints");
  ASSERT_EQ(ints.size(), 8u);
  EXPECT_EQ(ints.at(3).AsInt64(), INT32_MIN);
  EXPECT_EQ(ints.at(5).AsInt64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ints.at(6).AsInt64(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ints.at(7).AsUInt64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(root.Find("long_string")->AsString().size(), 300u);
  EXPECT_EQ(root.Find("flags")->kind(), PickleKind::kTuple);
  EXPECT_EQ(root.Find("flags")->at(1).AsBool(), false);
  EXPECT_TRUE(root.Find("none")->is_none());
  EXPECT_EQ(root.Find("float")->AsDouble(), -1.5);
  ASSERT_EQ(root.Find("many")->size(), 2500u);
  EXPECT_EQ(root.Find("many")->at(2499).AsInt64(), 2499);
}

TEST(PickleWriter, RoundTripsThroughPythonPickleLoad) {
  if (std::system("python3 -c 'import pickle' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 missing";
  const std::string path = ::testing::TempDir() + "/hbmsim_pickle_writer_mixed.pickle";
  std::ofstream(path, std::ios::binary) << Mixed();
  const std::string cmd =
      "python3 -c 'import pickle, sys; d = pickle.load(open(sys.argv[1], \"rb\")); "
      "ok = d[\"ints\"] == [0, 65535, 65536, -2**31, 2**31 - 1, -2**63, 2**63 - 1, 2**64 - 1] and "
      "d[\"long_string\"] == \"x\" * 300 and d[\"flags\"] == (True, False) and d[\"none\"] is None and "
      "d[\"float\"] == -1.5 and d[\"many\"] == list(range(2500)); sys.exit(0 if ok else 1)' " +
      path;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace hbmsim
