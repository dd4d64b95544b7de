// HeapSimulatorTrace events of the hand-made BufferAssignmentProto and
// HloProto fixtures (tests/data/xla/heap-trace.textproto, encoded by
// regenerate.sh), and protobuf bytes that are not valid.
#include "trace/xla/heap_trace_proto.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/trace/xla/xla_test_util.h"
#include "trace/xla/text_pair.h"

namespace hbmsim::trace::xla {
namespace {

// By hand: buffer 3 shares buffer 1's memory, so FREE 1 frees nothing and
// FREE 3 frees buffer 1; trace 1 replays as device 1 without addr= (its
// allocation 5 is not listed). t= counts the proto's events over both traces.
const std::vector<std::string> kHeapEvents = {
    "t0 alloc 1 1024 addr=0 tag=p.1",
    "t1 alloc 2 2048 addr=1024 tag=add.2",
    "t4 alloc 4 512 addr=3072 tag=mul.4",
    "t5 free 2",
    "t6 free 1",
    "t7 free 4",
    "t8 alloc 5 4096 tag=big.5 dev=1",
    "t9 free 5 dev=1",
};

TEST(XlaHeapTrace, BufferAssignmentProtoReplaysSharesAsOneBuffer) {
  absl::StatusOr<XlaTrace> trace = ReadHeapSimulatorProtoFile(kXlaData + "heap-trace.buffer_assignment.pb");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(EventLines(*trace), kHeapEvents);
  EXPECT_EQ(PeakLiveBytes(*trace, 0), 3584u);
  EXPECT_EQ(PeakLiveBytes(*trace, 1), 4096u);
  EXPECT_EQ(*trace->metadata.Find("source"), "xla heap-simulator trace (BufferAssignmentProto)");
  EXPECT_EQ(*trace->metadata.Find("xla_trace_0"),
            "device 0, buffer_allocation_index 2, 8 events, 1 shares, whole_module_simulation=true");
  EXPECT_EQ(*trace->metadata.Find("xla_trace_1"),
            "device 1, buffer_allocation_index 5, 2 events, 0 shares, whole_module_simulation=false");
}

TEST(XlaHeapTrace, HloProtoGivesTheSameEvents) {
  absl::StatusOr<XlaTrace> trace = ReadHeapSimulatorProtoFile(kXlaData + "heap-trace.hlo_proto.pb");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(EventLines(*trace), kHeapEvents);
  EXPECT_EQ(*trace->metadata.Find("source"), "xla heap-simulator trace (HloProto)");
}

TEST(XlaHeapTrace, SniffingTellsProtosFromText) {
  EXPECT_TRUE(LooksLikeXlaProtoFile(kXlaData + "heap-trace.buffer_assignment.pb"));
  EXPECT_TRUE(LooksLikeXlaProtoFile(kXlaData + "heap-trace.hlo_proto.pb"));
  EXPECT_FALSE(LooksLikeXlaProtoFile(kXlaData + "small-buffer-assignment.txt"));
  EXPECT_FALSE(LooksLikeXlaProtoFile(kXlaData + "heap-trace.textproto"));
  EXPECT_FALSE(LooksLikeXlaProtoFile(kXlaData + "no-such-file.pb"));
  // A cut proto is still a proto (its reader names the byte offset); a text
  // trace that starts with blank lines is not.
  absl::StatusOr<std::string> bytes = ReadWholeFile(kXlaData + "heap-trace.buffer_assignment.pb");
  ASSERT_TRUE(bytes.ok());
  const std::string cut = ::testing::TempDir() + "/sniff-cut.pb";
  std::ofstream(cut, std::ios::binary) << bytes->substr(0, 300);
  EXPECT_TRUE(LooksLikeXlaProtoFile(cut));
  const std::string text = ::testing::TempDir() + "/sniff-blank.trace";
  std::ofstream(text, std::ios::binary) << "\n\n\nalloc 1 5\nfree 1\n";
  EXPECT_FALSE(LooksLikeXlaProtoFile(text));
  std::ofstream(text, std::ios::binary) << "\n# hbmsim-trace v1\nalloc 1 5\nfree 1\n";
  EXPECT_FALSE(LooksLikeXlaProtoFile(text));
}

std::string Error(std::string_view bytes) {
  absl::StatusOr<XlaTrace> t = ParseHeapSimulatorProto(bytes, "x.pb");
  return t.ok() ? "ok" : std::string(t.status().message());
}

TEST(XlaHeapTrace, TruncatedBytesNameTheByteOffset) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(kXlaData + "heap-trace.buffer_assignment.pb");
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 312u);
  // Cut inside the second heap_simulator_traces field (bytes 272-311).
  EXPECT_EQ(
      Error(bytes->substr(0, 300)),
      "x.pb: byte offset 272: not a valid protobuf: field heap_simulator_traces of length 38 runs past the "
      "end (26 bytes left)");
  EXPECT_EQ(Error(std::string("\x0a\x05\x08\x01\x10", 5)),
            "x.pb: byte offset 0: not a valid protobuf: field logical_buffers of length 5 runs past the end "
            "(3 bytes "
            "left)");
  EXPECT_EQ(Error(std::string("\x0f", 1)),
            "x.pb: byte offset 0: not a valid protobuf: field runs past the end or has a bad wire type");
  // Bad UTF-8 in a string field (instruction_name of the first logical buffer).
  std::string bad_utf8 = *bytes;
  const size_t name = bad_utf8.find("p.1");
  ASSERT_NE(name, std::string::npos);
  bad_utf8[name] = '\xff';
  EXPECT_EQ(
      Error(bad_utf8),
      fmt::format("x.pb: byte offset {}: not a valid protobuf: field instruction_name is not valid UTF-8",
                  name));
  EXPECT_EQ(Error(""),
            "x.pb: no heap_simulator_traces: neither a BufferAssignmentProto with one nor an HloProto with a "
            "buffer_assignment");
}

// A BufferAssignmentProto with `events` (text of HeapSimulatorTrace.Event
// fields) in one trace, encoded by hand: each event is field 1 of field 4.
std::string OneTrace(const std::vector<std::string>& events) {
  std::string logical = std::string("\x0a\x04\x08\x01\x10\x08", 6);  // logical_buffers { id: 1 size: 8 }
  std::string trace;
  for (const std::string& e : events) trace += std::string("\x0a") + static_cast<char>(e.size()) + e;
  return logical + "\x22" + static_cast<char>(trace.size()) + trace;
}
const std::string kAlloc1("\x08\x00\x10\x01", 4);               // ALLOC 1
const std::string kFree1("\x08\x01\x10\x01", 4);                // FREE 1
const std::string kAlloc2("\x08\x00\x10\x02", 4);               // ALLOC 2 (not listed)
const std::string kShare2With1("\x08\x02\x10\x02\x28\x01", 6);  // SHARE_WITH 2 -> 1
const std::string kShare2With3("\x08\x02\x10\x02\x28\x03", 6);  // SHARE_WITH 2 -> 3
const std::string kKind7("\x08\x07\x10\x01", 4);

TEST(XlaHeapTrace, EventsThatContradictTheTraceNameTheirPath) {
  EXPECT_EQ(Error(OneTrace({kAlloc1, kFree1})), "ok");
  EXPECT_EQ(Error(OneTrace({kAlloc1, kShare2With1, kFree1, kFree1})),
            "x.pb: heap_simulator_traces[0].events[3]: FREE of buffer 1, which is not live");
  EXPECT_EQ(
      Error(OneTrace({kAlloc2})),
      "x.pb: heap_simulator_traces[0].events[0]: ALLOC of buffer 2, which logical_buffers does not list");
  EXPECT_EQ(Error(OneTrace({kAlloc1, kAlloc1})),
            "x.pb: heap_simulator_traces[0].events[1]: ALLOC of buffer 1, which is live");
  EXPECT_EQ(Error(OneTrace({kAlloc1, kShare2With3})),
            "x.pb: heap_simulator_traces[0].events[1]: buffer 2 shares with buffer 3, which is not live");
  EXPECT_EQ(Error(OneTrace({kFree1})),
            "x.pb: heap_simulator_traces[0].events[0]: FREE of buffer 1, which is not live");
  EXPECT_EQ(Error(OneTrace({kKind7})), "x.pb: heap_simulator_traces[0].events[0]: unknown event kind 7");
  // The sharer outlives the canonical buffer: its memory is freed with it.
  absl::StatusOr<XlaTrace> t = ParseHeapSimulatorProto(
      OneTrace({kAlloc1, kShare2With1, kFree1, std::string("\x08\x01\x10\x02", 4)}), "x.pb");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(EventLines(*t), ::testing::ElementsAre("t0 alloc 1 8", "t3 free 1"));
}

}  // namespace
}  // namespace hbmsim::trace::xla
