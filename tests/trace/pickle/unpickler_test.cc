// What the safe unpickler builds from well-formed pickles: every real
// snapshot, CPython's own output for each protocol, and each data opcode.
#include "trace/pickle/unpickler.h"

#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "tests/trace/pickle/pickle_bytes.h"

namespace hbmsim {
namespace {

using namespace pickle_bytes;

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

PickleTree MustUnpickle(const std::string& bytes) {
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "t.pickle");
  EXPECT_TRUE(tree.ok()) << tree.status();
  return tree.ok() ? *std::move(tree) : PickleTree();
}

struct RealFile {
  const char* name;
  size_t values;    // value-creating opcodes, counted with pickletools
  uint32_t height;  // container nesting, computed in python
};

// Node counts and heights computed independently with python's pickletools.
constexpr RealFile kRealFiles[] = {
    {"cs336_ctx128_forward.pickle", 40013, 7},
    {"cs336_ctx128_fullstep.pickle", 131330, 7},
    {"cs336_ctx256_forward_segment_free_burst.pickle", 44842, 7},
    {"empty_4dev_expandable_maxsplit64.pickle", 61, 3},
    {"gen1_legacy_history_at_oom.pickle", 14519, 9},
    {"gen2_no_time_us.pickle", 57744, 7},
    {"gen2_segments_only_list.pkl", 12840, 6},
    {"gen5_medium_512_training.pickle", 161010, 7},
    {"gen5_user_metadata_compile_context.pickle", 49480, 7},
    {"h100x4_expandable_segments_oom.pickle", 60157, 7},
    {"segment_alloc_free_churn_4dev.pickle", 55301, 7},
    {"small_trace_from_empty.pickle", 1901, 7},
    {"state_only_expandable_maxsplit128.pickle", 157, 5},
    {"state_only_tiny.pickle", 420, 5},
};

TEST(UnpicklerTest, EveryRealSnapshotLoads) {
  for (const RealFile& f : kRealFiles) {
    SCOPED_TRACE(f.name);
    absl::StatusOr<PickleTree> tree = UnpickleFile(kSharedTorchSnapshots + f.name);
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_EQ(tree->NodeCount(), f.values);
    EXPECT_EQ(tree->Height(), f.height);
    EXPECT_EQ(tree->root().kind(),
              std::string_view(f.name).ends_with(".pkl") ? PickleKind::kList : PickleKind::kDict);
  }
}

TEST(UnpicklerTest, TinySnapshotValues) {
  absl::StatusOr<PickleTree> tree = UnpickleFile(kSharedTorchSnapshots + "state_only_tiny.pickle");
  ASSERT_TRUE(tree.ok()) << tree.status();
  const PickleValue root = tree->root();
  ASSERT_EQ(root.size(), 4u);
  EXPECT_EQ(root.key(0).AsString(), "segments");
  EXPECT_EQ(root.key(3).AsString(), "external_annotations");
  const PickleValue segment = root.Find("segments")->at(0);
  EXPECT_EQ(segment.Find("address")->AsUInt64(), 125521090314240u);
  EXPECT_EQ(segment.Find("segment_type")->AsString(), "large");
  EXPECT_EQ(segment.Find("segment_pool_id")->kind(), PickleKind::kTuple);
  EXPECT_EQ(segment.Find("is_expandable")->AsBool(), false);
  const PickleValue settings = *root.Find("allocator_settings");
  EXPECT_EQ(settings.Find("max_split_size")->AsInt64(), -1);
  EXPECT_EQ(settings.Find("garbage_collection_threshold")->AsDouble(), 0.0);
  EXPECT_EQ(settings.Find("roundup_power2_divisions")->size(), 16u);
  EXPECT_FALSE(root.Find("nope").has_value());
}

// pickle.dumps({'a': [1, 2**64-1, -5, 1.5, None, True, (1, 2)], 'b': b'xy', 'c': (), 'd': (7,),
//               'e': (1, 2, 3), 'big': 2**70, 'neg': -2**63}, protocol=P) for P = 3 and 4.
constexpr std::string_view kCPythonProtocol3 =
    "80037d71002858010000006171015d7102284b018a09ffffffffffffffff004afbffffff473ff80000000000004e884b014b0286"
    "710365"
    "580100000062710443027879710558010000006371062958010000006471074b0785710858010000006571094b014b024b038771"
    "0a5803"
    "000000626967710b8a0900000000000000004058030000006e6567710c8a080000000000000080752e";
constexpr std::string_view kCPythonProtocol4 =
    "80049573000000000000007d94288c0161945d94284b018a09ffffffffffffffff004afbffffff473ff80000000000004e884b01"
    "4b0286"
    "94658c01629443027879948c016394298c0164944b0785948c0165944b014b024b0387948c03626967948a090000000000000000"
    "408c03"
    "6e6567948a080000000000000080752e";

void ExpectCPythonValue(const PickleTree& tree) {
  const PickleValue root = tree.root();
  ASSERT_EQ(root.size(), 7u);
  const PickleValue a = *root.Find("a");
  ASSERT_EQ(a.size(), 7u);
  EXPECT_EQ(a.at(0).AsInt64(), 1);
  EXPECT_EQ(a.at(1).kind(), PickleKind::kUInt);
  EXPECT_EQ(a.at(1).AsUInt64(), UINT64_MAX);
  EXPECT_EQ(a.at(1).AsInt64(), std::nullopt);
  EXPECT_EQ(a.at(2).AsInt64(), -5);
  EXPECT_EQ(a.at(2).AsUInt64(), std::nullopt);
  EXPECT_EQ(a.at(3).AsDouble(), 1.5);
  EXPECT_TRUE(a.at(4).is_none());
  EXPECT_EQ(a.at(5).AsBool(), true);
  EXPECT_EQ(a.at(6).kind(), PickleKind::kTuple);
  EXPECT_EQ(a.at(6).at(1).AsInt64(), 2);
  EXPECT_EQ(root.Find("b")->kind(), PickleKind::kBytes);
  EXPECT_EQ(root.Find("b")->AsString(), "xy");
  EXPECT_EQ(root.Find("c")->size(), 0u);
  EXPECT_EQ(root.Find("d")->at(0).AsInt64(), 7);
  EXPECT_EQ(root.Find("e")->at(2).AsInt64(), 3);
  EXPECT_EQ(root.Find("big")->kind(), PickleKind::kBigInt);
  EXPECT_EQ(root.Find("big")->AsUInt64(), std::nullopt);
  EXPECT_EQ(root.Find("neg")->AsInt64(), INT64_MIN);
  EXPECT_EQ(tree.Height(), 3u);
}

TEST(UnpicklerTest, CPythonProtocol3WithBinPut) {
  ExpectCPythonValue(MustUnpickle(FromHex(kCPythonProtocol3)));
}

TEST(UnpicklerTest, CPythonProtocol4WithFrameAndMemoize) {
  ExpectCPythonValue(MustUnpickle(FromHex(kCPythonProtocol4)));
}

TEST(UnpicklerTest, Long1NineBytesAndEdges) {
  const std::string eight_ff = std::string(8, '\xff');
  const PickleTree t = MustUnpickle(Proto(4) + kEmptyList + kMark + Long1(eight_ff + Op(0)) +  // 2^64-1
                                    Long1(std::string(8, '\0') + Op(0x80)) +                   // -2^71: big
                                    Long1(std::string(7, '\0') + Op(0x80) + Op(0)) +           // 2^63
                                    Long1(std::string(7, '\0') + Op(0x80) + Op(0xff)) +        // -2^63 padded
                                    Long1("") + Long1(Op(0xff)) + Long1(Op(0x7f)) +            // 0, -1, 127
                                    Long4(LE(0x123456789a, 5)) + BinInt(-2) + BinInt2(65535) +  //
                                    BinInt1(255) + kAppends + kStop);
  const PickleValue l = t.root();
  ASSERT_EQ(l.size(), 11u);
  EXPECT_EQ(l.at(0).AsUInt64(), UINT64_MAX);
  EXPECT_EQ(l.at(1).kind(), PickleKind::kBigInt);
  EXPECT_EQ(l.at(2).AsUInt64(), uint64_t{1} << 63);
  EXPECT_EQ(l.at(3).AsInt64(), INT64_MIN);
  EXPECT_EQ(l.at(4).AsInt64(), 0);
  EXPECT_EQ(l.at(5).AsInt64(), -1);
  EXPECT_EQ(l.at(6).AsInt64(), 127);
  EXPECT_EQ(l.at(7).AsInt64(), 0x123456789a);
  EXPECT_EQ(l.at(8).AsInt64(), -2);
  EXPECT_EQ(l.at(9).AsInt64(), 65535);
  EXPECT_EQ(l.at(10).AsInt64(), 255);
}

TEST(UnpicklerTest, MemoizedValuesAreSharedNotCopied) {
  const std::string inner = kEmptyList + kMemoize + kMark + kNone + kNone + kAppends;
  const PickleTree t =
      MustUnpickle(Proto(4) + kEmptyList + kMark + inner + BinGet(0) + LongBinGet(0) + kAppends + kStop);
  const PickleValue root = t.root();
  ASSERT_EQ(root.size(), 3u);
  EXPECT_EQ(root.at(0).id(), root.at(1).id());
  EXPECT_EQ(root.at(0).id(), root.at(2).id());
  EXPECT_EQ(t.NodeCount(), 4u);  // outer list, inner list, two Nones
}

TEST(UnpicklerTest, Protocol2FormsListDictTuple) {
  const PickleTree t = MustUnpickle(Proto(2) + kMark + BinUnicode("k") + BinPut(1) + kMark + BinInt1(1) +
                                    "l" + kMark + "d" + kEmptyTuple + Op(0x85) + Op(0x87) + BinGet(1) +
                                    kMark + kNone + kNone + kNone + "t" + "d" + kStop);
  const PickleValue root = t.root();
  ASSERT_TRUE(root.is_dict());
  ASSERT_EQ(root.size(), 2u);
  const PickleValue v = root.value(0);
  EXPECT_EQ(v.kind(), PickleKind::kTuple);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v.at(0).at(0).AsInt64(), 1);
  EXPECT_TRUE(v.at(1).is_dict());
  EXPECT_EQ(v.at(2).at(0).size(), 0u);            // TUPLE1 of an empty tuple
  EXPECT_EQ(root.key(1).id(), root.key(0).id());  // the same memoized "k"
  EXPECT_EQ(root.Find("k")->size(), 3u);          // the later pair wins
  EXPECT_TRUE(root.Find("k")->at(2).is_none());
}

TEST(UnpicklerTest, DictBatchesAcrossNestedValuesAndLastKeyWins) {
  // Two SETITEMS batches with a nested dict built between them: the builder
  // chains the ranges and makes them contiguous at the end.
  const std::string nested = kEmptyDict + kMark + ShortUnicode("x") + BinInt1(9) + kSetItems;
  const PickleTree t = MustUnpickle(Proto(4) + kEmptyDict + kMark + ShortUnicode("a") + BinInt1(1) +
                                    kSetItems + kMark + ShortUnicode("n") + nested + kSetItems +
                                    ShortUnicode("a") + BinInt1(3) + kSetItem + kStop);
  const PickleValue root = t.root();
  ASSERT_EQ(root.size(), 3u);
  EXPECT_EQ(root.key(0).AsString(), "a");
  EXPECT_EQ(root.key(1).AsString(), "n");
  EXPECT_EQ(root.Find("n")->Find("x")->AsInt64(), 9);
  EXPECT_EQ(root.Find("a")->AsInt64(), 3);
  EXPECT_EQ(root.value(0).AsInt64(), 1);
}

TEST(UnpicklerTest, PopDupPopMarkAndStrings) {
  const PickleTree t = MustUnpickle(Proto(5) + kEmptyList + kMark + kMark + kNone + "1" + BinUnicode("é") +
                                    "2" + Op('B') + LE(2, 4) + "\x01\x02" + "0" + Op(0x8d) + LE(3, 8) +
                                    "abc" + kMark + "0" + BinFloat(-0.25) + kAppends + kStop);
  const PickleValue l = t.root();
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l.at(0).AsString(), "é");
  EXPECT_EQ(l.at(1).AsString(), "é");
  EXPECT_EQ(l.at(2).AsString(), "abc");
  EXPECT_EQ(l.at(3).AsDouble(), -0.25);
}

}  // namespace
}  // namespace hbmsim
