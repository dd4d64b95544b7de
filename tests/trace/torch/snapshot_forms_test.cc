// Snapshot shapes the real files do not cover, authored as pickle bytes:
// pre-2.0 bare lists, unknown trace actions, schema errors with value paths,
// and a memo bomb aimed at the model rather than the unpickler.
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/pickle/pickle_bytes.h"
#include "trace/pickle/unpickler.h"
#include "trace/torch/initial_state.h"
#include "trace/torch/settings_parse.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_summary.h"

namespace hbmsim {
namespace {

using namespace pickle_bytes;

// A value as pickle opcodes (no memo), so tests read like the Python literal.
std::string S(std::string_view s) { return ShortUnicode(s); }
std::string I(int32_t v) { return BinInt(v); }
std::string L(const std::vector<std::string>& items) {
  std::string out = kEmptyList;
  if (items.empty()) return out;
  out += kMark;
  for (const std::string& item : items) out += item;
  return out + kAppends;
}
std::string D(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out = kEmptyDict + kMark;
  for (const auto& [k, v] : pairs) out += S(k) + v;
  return out + kSetItems;
}
std::string File(const std::string& value) { return Proto(4) + value + kStop; }

absl::StatusOr<Snapshot> Parse(const std::string& bytes) {
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "t.pickle");
  if (!tree.ok()) return tree.status();
  return ParseSnapshot(*tree);
}

std::string ErrorOf(const std::string& bytes) {
  absl::StatusOr<Snapshot> snap = Parse(bytes);
  return snap.ok() ? "ok" : std::string(snap.status().message());
}

TEST(SnapshotFormsTest, PreTwoZeroBareListGetsAddressesAndSizesFromBlocks) {
  const std::string seg = D({{"device", I(0)},
                             {"address", I(4096)},
                             {"total_size", I(300)},
                             {"segment_type", S("small")},
                             {"blocks", L({D({{"size", I(100)}, {"state", S("active_allocated")}}),
                                           D({{"size", I(200)}, {"state", S("inactive")}})})}});
  absl::StatusOr<Snapshot> snap = Parse(File(L({seg})));
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_TRUE(snap->bare_list);
  EXPECT_EQ(snap->generation, 1);
  const SnapshotSegment& s = snap->segments[0];
  EXPECT_EQ(s.type, SegmentType::kSmall);
  EXPECT_EQ(s.blocks[0].address, Offset(4096));
  EXPECT_EQ(s.blocks[1].address, Offset(4196));
  EXPECT_EQ(s.allocated_size, Bytes(100));
  EXPECT_EQ(s.active_size, Bytes(100));
  EXPECT_EQ(s.requested_size, Bytes(0));
  const SegmentTotals t = SummarizeSegments(snap->segments);
  EXPECT_EQ(t.inactive, Bytes(200));
  EXPECT_EQ(t.largest_inactive, Bytes(200));
}

TEST(SnapshotFormsTest, UnknownActionsAreCountedInOrder) {
  const std::string trace = L(
      {D({{"action", S("annotate")}, {"addr", I(5)}}), D({{"action", S("user_defined")}}),
       D({{"action", S("alloc")}, {"addr", I(64)}, {"size", I(8)}, {"stream", I(7)}}),
       D({{"action", S("annotate")}}), D({{"action", S("oom")}, {"size", I(1024)}, {"device_free", I(10)}})});
  absl::StatusOr<Snapshot> snap = Parse(File(D({{"segments", L({})}, {"device_traces", L({L({}), trace})}})));
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_EQ(snap->generation, 2);
  EXPECT_EQ(snap->other_action_names, (std::vector<std::string>{"annotate", "user_defined"}));
  const std::map<std::string, uint64_t> want = {
      {"alloc", 1}, {"annotate", 2}, {"oom", 1}, {"user_defined", 1}};
  EXPECT_EQ(CountTraceActions(*snap), want);
  const std::vector<TraceEntry>& e = snap->device_traces[1].entries;
  EXPECT_EQ(e[1].other_action, 1);
  EXPECT_EQ(e[2].addr, Offset(64));
  EXPECT_EQ(e[2].stream, StreamId(7));
  EXPECT_EQ(e[4].device_free, Bytes(10));
  EXPECT_EQ(DevicesWithData(*snap), std::vector<DeviceId>{DeviceId(1)});
}

TEST(SnapshotFormsTest, SchemaErrorsNameTheValuePath) {
  const auto seg_with_block = [](const std::string& block) {
    return File(D({{"segments", L({D({{"address", I(0)}, {"total_size", I(8)}, {"blocks", L({block})}})})}}));
  };
  EXPECT_EQ(ErrorOf(seg_with_block(D({{"state", S("inactive")}}))),
            "t.pickle: segments[0].blocks[0]: missing key 'size'");
  EXPECT_EQ(ErrorOf(seg_with_block(D({{"size", S("8")}, {"state", S("inactive")}}))),
            "t.pickle: segments[0].blocks[0].size: expected int, found str");
  EXPECT_EQ(ErrorOf(seg_with_block(D({{"size", I(8)}, {"state", S("freed")}}))),
            "t.pickle: segments[0].blocks[0].state: unknown block state 'freed'");
  EXPECT_EQ(ErrorOf(seg_with_block(D({{"size", I(-8)}, {"state", S("inactive")}}))),
            "t.pickle: segments[0].blocks[0].size: integer out of range (expects 0 to 2^64-1)");
  EXPECT_EQ(ErrorOf(File(I(3))),
            "t.pickle: expected a dict with 'segments' or a list of segments, found int");
  EXPECT_EQ(ErrorOf(File(D({{"device_traces", L({})}}))), "t.pickle: missing key 'segments'");
  EXPECT_EQ(ErrorOf(File(D({{"segments", L({})}, {"device_traces", L({L({D({{"action", S("alloc")}})})})}}))),
            "t.pickle: device_traces[0][0]: missing key 'addr'");
  EXPECT_EQ(ErrorOf(File(D({{"segments", L({D({{"address", I(0)},
                                               {"total_size", I(8)},
                                               {"segment_pool_id", I(0)},
                                               {"blocks", L({})}})})}}))),
            "t.pickle: segments[0].segment_pool_id: expected a pair of ints");
}

TEST(SnapshotFormsTest, SharedBlocksCannotMultiplyTheWork) {
  // One block dict, referenced 1000 times by one segment, which the segment
  // list references 1000 times: a million blocks from a few KB.
  const std::string block = D({{"size", I(8)}, {"state", S("inactive")}}) + kMemoize;  // memo 0
  std::string blocks = kEmptyList + kMark + block + Repeat(BinGet(0), 999) + kAppends;
  const std::string seg =
      D({{"address", I(0)}, {"total_size", I(8000)}, {"blocks", blocks}}) + kMemoize;  // memo 1
  const std::string segments = kEmptyList + kMark + seg + Repeat(BinGet(1), 999) + kAppends;
  const std::string bytes = File(D({{"segments", segments}}));
  absl::StatusOr<PickleTree> tree = Unpickle(bytes, "t.pickle");
  ASSERT_TRUE(tree.ok()) << tree.status();
  const size_t budget = tree->NodeCount();
  ASSERT_LT(budget, 1000u);
  absl::StatusOr<Snapshot> snap = ParseSnapshot(*tree);
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(
      std::string(snap.status().message()),
      fmt::format("t.pickle: segments[0].blocks[{}]: the snapshot names more segments, blocks and trace "
                  "entries than it holds values (shared references); refused",
                  budget - 1));
}

TEST(SnapshotFormsTest, SettingsValuesAreSpelledAsPythonPrintsThem) {
  const std::string value = L({kNewTrue, kNone, BinFloat(1.5), BinFloat(2.0), S("a"), Op('C') + Op(1) + "x",
                               I(1) + Op(0x85), D({{"k", I(-1)}})});
  absl::StatusOr<PickleTree> tree = Unpickle(File(value), "t.pickle");
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(PythonText(tree->root()), "[True, None, 1.5, 2.0, 'a', b'x', (1,), {'k': -1}]");
  EXPECT_EQ(PythonText(tree->root(), 12), "[True, None,...");
  absl::StatusOr<PickleTree> str = Unpickle(File(S("expandable_segments:True")), "t.pickle");
  ASSERT_TRUE(str.ok());
  EXPECT_EQ(PythonText(str->root()), "expandable_segments:True");  // top-level str: its plain text
}

TEST(SnapshotFormsTest, CorruptedRealFileNeverCrashesTheModelOrTheWalk) {
  absl::StatusOr<std::string> whole =
      ReadWholeFile(std::string(HBMSIM_SHARED_DIR) + "/torch_snapshots/small_trace_from_empty.pickle");
  ASSERT_TRUE(whole.ok()) << whole.status();
  const uint32_t seed = 7;
  std::mt19937 rng(seed);
  size_t parsed = 0;
  for (int round = 0; round < 300; ++round) {
    std::string bytes = *whole;
    for (int k = 0; k < 2; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    absl::StatusOr<Snapshot> snap = Parse(bytes);
    if (!snap.ok()) {
      ASSERT_TRUE(std::string(snap.status().message()).starts_with("t.pickle: ")) << "seed " << seed;
      continue;
    }
    ++parsed;
    for (const DeviceTrace& t : snap->device_traces) RebuildInitialState(*snap, t.device);
  }
  // Flips inside strings or numbers mostly leave a loadable snapshot; frames
  // are read (and type-checked) since the memory_viz export carries them, so
  // a flip that breaks a frame's type is an error too. The count is exact
  // for this seed (std::mt19937 is fully specified).
  EXPECT_EQ(parsed, 214u) << "seed " << seed;
}

}  // namespace
}  // namespace hbmsim
