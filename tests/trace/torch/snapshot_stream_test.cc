// LoadSnapshotFile streams the device traces out of the tree while the file
// is unpickled (trace/torch/snapshot_stream.h); ParseSnapshot of a whole tree
// does not. Both must build the same Snapshot, for every shared snapshot and
// for files that make the stream fall back or keep an entry's error.
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/shared_data.h"
#include "tests/trace/pickle/pickle_bytes.h"
#include "trace/pickle/unpickler.h"
#include "trace/torch/snapshot.h"

namespace hbmsim {
namespace {

using namespace pickle_bytes;

void ExpectSame(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.segments.size(), b.segments.size());
  EXPECT_EQ(a.other_action_names, b.other_action_names);
  EXPECT_EQ(a.context.list_count(), b.context.list_count());
  ASSERT_EQ(a.device_traces.size(), b.device_traces.size());
  for (size_t d = 0; d < a.device_traces.size(); ++d) {
    const auto& x = a.device_traces[d].entries;
    const auto& y = b.device_traces[d].entries;
    ASSERT_EQ(x.size(), y.size()) << "device " << d;
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].action, y[i].action);
      EXPECT_EQ(x[i].addr, y[i].addr);
      EXPECT_EQ(x[i].size, y[i].size);
      EXPECT_EQ(x[i].time_us(), y[i].time_us());
      const EventContext &p = a.ContextOf(x[i]), &q = b.ContextOf(y[i]);
      ASSERT_EQ(p.frames, q.frames) << "device " << d << " entry " << i;
      EXPECT_EQ(p.category, q.category);
      EXPECT_EQ(p.user_metadata, q.user_metadata);
      EXPECT_EQ(p.compile_context, q.compile_context);
    }
  }
}

absl::StatusOr<Snapshot> WholeTree(const std::string& path) {
  absl::StatusOr<PickleTree> tree = UnpickleFile(path);
  if (!tree.ok()) return tree.status();
  return ParseSnapshot(*tree);
}

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(SnapshotStreamTest, EverySharedSnapshotReadsAsItsWholeTree) {
  for (const char* f : {"gen5_medium_512_training.pickle", "gen1_history_addresses.pickle",
                        "gen2_no_time_us.pickle", "segment_alloc_free_churn_4dev.pickle",
                        "gen5_user_metadata_compile_context.pickle", "h100x4_expandable_segments_oom.pickle",
                        "gen2_segments_only_list.pkl", "state_only_tiny.pickle"}) {
    SCOPED_TRACE(f);
    absl::StatusOr<Snapshot> streamed = LoadSnapshotFile(kSharedTorchSnapshots + f);
    absl::StatusOr<Snapshot> whole = WholeTree(kSharedTorchSnapshots + f);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    ASSERT_TRUE(whole.ok()) << whole.status();
    ExpectSame(*streamed, *whole);
  }
}

// 1500 entries: a batch of 1000 and one of 500, both discarded from the tree.
std::string Entries(int n, const std::string& bad_at_700 = "") {
  std::string out = kEmptyList + kMark;
  for (int i = 0; i < n; ++i) {
    if (i == 1000) out += kAppends + kMark;
    const std::string addr = (i == 700 && !bad_at_700.empty()) ? bad_at_700 : BinInt(4096 * i);
    out += kEmptyDict + kMark + ShortUnicode("action") + ShortUnicode("alloc") + ShortUnicode("addr") + addr +
           ShortUnicode("size") + BinInt(512) + kSetItems;
  }
  return out + kAppends;
}

TEST(SnapshotStreamTest, AnEntryErrorNamesItsDeviceTracePath) {
  const std::string bytes = Proto(4) + kEmptyDict + kMark + ShortUnicode("segments") + kEmptyList +
                            ShortUnicode("device_traces") + kEmptyList + kMark + Entries(10) +
                            Entries(1500, ShortUnicode("x")) + kAppends + kSetItems + kStop;
  const std::string path = Write("stream_error.pickle", bytes);
  absl::StatusOr<Snapshot> streamed = LoadSnapshotFile(path);
  absl::StatusOr<Snapshot> whole = WholeTree(path);
  ASSERT_FALSE(streamed.ok());
  EXPECT_EQ(streamed.status().message(), whole.status().message());
  EXPECT_NE(std::string(streamed.status().message()).find(": device_traces[1][700].addr: expected int"),
            std::string::npos)
      << streamed.status();
}

TEST(SnapshotStreamTest, ATakenListOutsideTheTracesIsReadAgainWhole) {
  // Entry-like dicts under another key: the stream takes them, the parse never
  // reaches them there, so the file is read again without a stream.
  const std::string bytes = Proto(4) + kEmptyDict + kMark + ShortUnicode("segments") + kEmptyList +
                            ShortUnicode("elsewhere") + Entries(1500) + ShortUnicode("device_traces") +
                            kEmptyList + kMark + Entries(3) + kAppends + kSetItems + kStop;
  const std::string path = Write("stream_elsewhere.pickle", bytes);
  absl::StatusOr<Snapshot> streamed = LoadSnapshotFile(path);
  absl::StatusOr<Snapshot> whole = WholeTree(path);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  ExpectSame(*streamed, *whole);
  EXPECT_EQ(streamed->device_traces[0].entries.size(), 3u);
}

TEST(SnapshotStreamTest, AGetOfADiscardedEntryIsRefusedWithItsOffset) {
  // Entry dict memoized (memo 0) in a batch the stream discards, then fetched.
  const std::string entry = kEmptyDict + kMemoize + kMark + ShortUnicode("action") + ShortUnicode("alloc") +
                            ShortUnicode("addr") + BinInt(0) + ShortUnicode("size") + BinInt(8) + kSetItems;
  const std::string head = Proto(4) + kEmptyDict + kMark + ShortUnicode("device_traces") + kEmptyList + kMark +
                           kEmptyList + kMark + entry + entry + kAppends + kAppends + ShortUnicode("again");
  const std::string bytes = head + BinGet(0) + kSetItems + kStop;
  const std::string path = Write("stream_get.pickle", bytes);
  absl::StatusOr<Snapshot> streamed = LoadSnapshotFile(path);
  ASSERT_FALSE(streamed.ok());
  EXPECT_EQ(streamed.status().message(),
            path + ": byte " + std::to_string(head.size()) +
                ": BINGET of memo entry 0, a list item already consumed while reading; refused");
}

}  // namespace
}  // namespace hbmsim
