// The binary writer refuses what the text writer refuses, and its output
// stays the same however it is fed.
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

namespace hbmsim {
namespace {

std::string WriterMessage(const absl::Status& s) { return std::string(s.message()); }

TEST(BinaryWriter, RefusesWhatTextCannotCarry) {
  std::ostringstream out;
  BinaryTraceWriter writer(out);
  Event e;
  e.kind = EventKind::kAlloc;
  e.tag = "two words";
  EXPECT_EQ(WriterMessage(writer.Write(e)),
            "tag 'two words' holds a blank, line break or NUL, which a trace cannot hold");
  e = Event{};
  e.kind = EventKind::kMark;
  EXPECT_EQ(WriterMessage(writer.Write(e)), "a mark without a label, which a trace cannot hold");
  e.label = "x";
  e.stream = StreamId(2);
  EXPECT_EQ(WriterMessage(writer.Write(e)), "stream= on mark: a trace holds it only on alloc and free*");
  e.stream = StreamId(0);
  e.addr = 5;
  EXPECT_EQ(WriterMessage(writer.Write(e)), "shape= or addr= on mark: a trace holds them only on alloc");
  EXPECT_EQ(writer.events_written(), 0u);
}

TEST(BinaryWriter, HeaderOnceAndNothingAfterFinish) {
  std::ostringstream out;
  BinaryTraceWriter writer(out);
  TraceMetadata bad;
  bad.entries = {{"a key", "v"}};
  EXPECT_EQ(WriterMessage(writer.WriteHeader(bad)),
            "metadata key 'a key' is empty or holds a blank or ':', which a trace's header cannot hold");
  ASSERT_TRUE(writer.WriteHeader(TraceMetadata{}).ok());
  EXPECT_EQ(WriterMessage(writer.WriteHeader(TraceMetadata{})),
            "the trace header must be written once, before any event");
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(WriterMessage(writer.Write(Event{})), "cannot write an event after Finish()");
  // magic, version 2, flags, no entries, end record with 0 events and the crc32 of the 13 bytes before it
  // (python3 -c "import zlib; print(hex(zlib.crc32(b'\\x89HBT\\r\\n\\x1a\\n\\x02\\x00\\x00\\x0f\\x00')))": 0xdfdd7ab9)
  EXPECT_EQ(out.str(), std::string("\x89HBT\r\n\x1a\n\x02\x00\x00\x0f\x00\xb9\x7a\xdd\xdf", 17));
}

// A million events cross many 64 KiB flushes and zstd chunks; the read-back
// sees every one, in order, with its values.
TEST(BinaryWriter, ManyFlushesReadBackExactly) {
  for (const bool compress : {false, true}) {
    std::ostringstream out;
    BinaryTraceWriter writer(out, BinaryWriterOptions{.compress = compress});
    Event e;
    for (uint64_t i = 0; i < 500000; ++i) {
      e = Event{};
      e.kind = EventKind::kAlloc;
      e.id = i;
      e.bytes = Bytes(i * 7 + 1);
      e.time_us = i * 3;
      e.tag = (i % 3 == 0) ? "weights" : "activation";
      ASSERT_TRUE(writer.Write(e).ok());
      e = Event{};
      e.kind = EventKind::kFree;
      e.id = i;
      ASSERT_TRUE(writer.Write(e).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
    absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::FromString(out.str());
    ASSERT_TRUE(r.ok()) << r.status();
    uint64_t n = 0;
    uint64_t sum_bytes = 0;
    uint64_t weights = 0;
    absl::Status s = testing::Pump(**r, [&](const Event& got) {
      if (got.kind == EventKind::kAlloc) {
        sum_bytes += got.bytes.value() + *got.time_us;
        weights += got.tag == "weights";
      }
      ++n;
      return absl::OkStatus();
    });
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(n, 1000000u);
    // sum of (7i + 1) + 3i for i < 500000 = 10 * (499999 * 500000 / 2) + 500000
    EXPECT_EQ(sum_bytes, 1249998000000u);
    EXPECT_EQ(weights, 166667u);
  }
}

}  // namespace
}  // namespace hbmsim
