// A damaged .hbt file is an error naming the byte, never a crash, a hang or
// a silently shorter trace; lying lengths cost no memory.
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

namespace hbmsim {
namespace {

using namespace std::string_literals;
using testing::ReadAll;
using testing::TextToBinary;

const char kTrace[] =
    "# hbmsim-trace v1\n# source: test\n"
    "alloc 1 4096 t=1 tag=weights shape=f32[32,32]\nalloc 2 100 t=2 stream=1 tag=act addr=0x1000\n"
    "mark step=0\nfree_requested 2 stream=1\nfree_completed 2 stream=1\nprogram_load 1 10 tag=p\n"
    "program_run 1 device=0\nprogram_unload 1\nfree 1 t=9\n";

std::string Valid(bool compress = false) {
  absl::StatusOr<std::string> b = TextToBinary(kTrace, compress);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : "";
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(Corruption, EveryTruncationIsAnErrorAtTheEnd) {
  const std::string full = Valid();
  ASSERT_TRUE(ReadAll(full).ok());
  for (size_t n = 0; n < full.size(); ++n) {
    SCOPED_TRACE(n);
    const absl::Status s = ReadAll(full.substr(0, n));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    if (n < 8) continue;  // too short for the magic: "bad magic bytes" at byte 0
    EXPECT_NE(Message(s).find(fmt::format("t.hbt: byte {}: truncated", n)), std::string::npos) << s;
  }
}

TEST(Corruption, EveryCompressedTruncationIsAnError) {
  const std::string full = Valid(/*compress=*/true);
  for (size_t n = 4; n < full.size(); ++n) {
    SCOPED_TRACE(n);
    const absl::Status s = ReadAll(full.substr(0, n));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(Message(s).rfind("t.hbt: byte ", 0), 0u) << s;
  }
}

TEST(Corruption, TruncatedAtARecordBoundarySaysTheEndRecordIsMissing) {
  const std::string full = Valid();
  const std::string cut = full.substr(0, full.size() - 6);  // the end record: 0F, a 1-byte count, the crc32
  EXPECT_EQ(
      Message(ReadAll(cut)),
      fmt::format("t.hbt: byte {}: truncated: the file ends without the end-of-trace record", cut.size()));
}

TEST(Corruption, FlippedBytesNeverCrash) {
  const std::string full = Valid();
  int errors = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    for (const uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::string bad = full;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      const absl::Status s = ReadAll(bad);
      if (!s.ok()) {
        ++errors;
        EXPECT_EQ(Message(s).rfind("t.hbt: byte ", 0), 0u) << s;
      }
    }
  }
  // Most flips break something; a few (a dimension, a size) give another valid trace.
  EXPECT_GT(errors, static_cast<int>(full.size()));
}

TEST(Corruption, BadMagicAndVersion) {
  EXPECT_EQ(Message(ReadAll("alloc 1 1\n")), "t.hbt: byte 0: not an hbmsim binary trace (bad magic bytes)");
  std::string v3 = Valid();
  v3[8] = 3;
  EXPECT_EQ(Message(ReadAll(v3)),
            "t.hbt: byte 9: unsupported binary trace version 3 (this reader reads versions 1 to 2)");
  std::string v0 = Valid();
  v0[8] = 0;
  EXPECT_EQ(Message(ReadAll(v0)),
            "t.hbt: byte 9: unsupported binary trace version 0 (this reader reads versions 1 to 2)");
}

const std::string kHead = "\x89HBT\r\n\x1a\n\x01\x00"s;

TEST(Corruption, AHeaderClaimingATrillionEntriesFailsFast) {
  // 10^12 metadata entries in a 100-byte file: read one at a time, it meets the end.
  std::string bytes = kHead + "\x80\xa0\x94\xa5\x8d\x1d"s;  // varint 10^12
  while (bytes.size() < 100) bytes += "\x01k\x02vv";
  bytes.resize(100);
  EXPECT_EQ(Message(ReadAll(bytes)), "t.hbt: byte 100: truncated: the file ends inside a record");
}

TEST(Corruption, AStringClaimingATerabyteIsRefusedBeforeItsBytes) {
  const std::string bytes = kHead + "\x01"s + "\x80\xa0\x94\xa5\x8d\x1d";
  EXPECT_EQ(Message(ReadAll(bytes)),
            "t.hbt: byte 17: metadata key of 1000000000000 bytes (at most 1048576 allowed)");
}

TEST(Corruption, AnEndRecordClaimingATrillionEventsIsAMismatch) {
  const std::string bytes = kHead + "\x00"s + "\x0f\x80\xa0\x94\xa5\x8d\x1d"s;
  EXPECT_EQ(Message(ReadAll(bytes)),
            "t.hbt: byte 11: the end-of-trace record counts 1000000000000 events but the file holds 0");
}

TEST(Corruption, OverlongVarintIsMalformed) {
  const std::string bytes = kHead + std::string(11, '\xff');
  EXPECT_EQ(Message(ReadAll(bytes)), "t.hbt: byte 10: malformed varint");
}

TEST(Corruption, DataAfterTheEndRecord) {
  EXPECT_EQ(Message(ReadAll(Valid() + "x")),
            fmt::format("t.hbt: byte {}: data after the end-of-trace record", Valid().size()));
}

TEST(Corruption, UnknownRecordTypeAndMisplacedAttributes) {
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x0e"s)), "t.hbt: byte 11: unknown record type 0x0e");
  // program_run (6) with stream= (0x20).
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x26\x02\x01"s)),
            "t.hbt: byte 13: stream= on an event other than alloc and free*");
  // an ext byte with an unknown bit
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x80\x10"s)), "t.hbt: byte 13: unknown attribute bits 0x10");
  // a tag reference into an empty dictionary
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x40\x02\x01\x05"s)),
            "t.hbt: byte 15: tag reference 5 but the dictionary holds 0 tags");
}

// The same errors where the decoder's fast path reads the record (enough
// bytes follow it): a reference past the dictionary, and one record later a
// tag on a free.
TEST(Corruption, ATagReferenceReadByTheFastPathIsCheckedTheSame) {
  std::string marks;
  for (int i = 0; i < 40; ++i) marks += "\x07\x01m"s;  // mark m, so the record is not near the end
  // alloc 1 1 tag=w (dictionary 1), then alloc 2 1 tag=<dictionary 2>: one past it.
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x40\x02\x01\x00\x01w\x40\x02\x01\x02"s + marks)),
            "t.hbt: byte 21: tag reference 2 but the dictionary holds 1 tags");
  // free 1 with tag= (0x40): tags go on alloc and program_load only.
  EXPECT_EQ(Message(ReadAll(kHead + "\x00\x40\x02\x01\x00\x01w\x41\x00\x01"s + marks)),
            "t.hbt: byte 19: tag= on an event other than alloc and program_load");
}

TEST(Corruption, ATagWithABlankCannotComeFromText) {
  EXPECT_EQ(
      Message(ReadAll(kHead + "\x00\x40\x02\x01\x00\x03"s + "a b")),
      "t.hbt: byte 19: tag the text format cannot carry (empty, blank, line break, NUL or invalid UTF-8)");
}

// Semantic errors are the validator's words, as the text reader says them.
TEST(Corruption, SemanticErrorsMatchTheTextReader) {
  const std::string text = "alloc 1 10\nfree 2\n";
  absl::StatusOr<std::unique_ptr<TextTraceReader>> t = TextTraceReader::FromString(text, "t.trace");
  ASSERT_TRUE(t.ok());
  const absl::Status text_error = testing::Pump(**t, [](const Event&) { return absl::OkStatus(); });
  // The writer does not judge semantics, so it can write the bad trace.
  std::ostringstream out;
  BinaryTraceWriter writer(out);
  Event e;
  e.kind = EventKind::kAlloc;
  e.id = 1;
  e.bytes = Bytes(10);
  ASSERT_TRUE(writer.Write(e).ok());
  e = Event{};
  e.kind = EventKind::kFree;
  e.id = 2;
  ASSERT_TRUE(writer.Write(e).ok());
  ASSERT_TRUE(writer.Finish().ok());
  const absl::Status binary_error = ReadAll(out.str());
  ASSERT_FALSE(text_error.ok());
  const std::string what = Message(text_error).substr(std::string("t.trace:2: ").size());
  EXPECT_EQ(Message(binary_error), "t.hbt: byte 14: " + what);
}

TEST(Corruption, AfterASemanticErrorReadingGoesOn) {
  std::ostringstream out;
  BinaryTraceWriter writer(out);
  Event e;
  e.kind = EventKind::kFree;
  e.id = 3;
  ASSERT_TRUE(writer.Write(e).ok());
  e.kind = EventKind::kAlloc;
  ASSERT_TRUE(writer.Write(e).ok());
  ASSERT_TRUE(writer.Finish().ok());
  absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::FromString(out.str());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)->Next(e).ok());
  absl::StatusOr<bool> got = (*r)->Next(e);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got);
  EXPECT_EQ(e.kind, EventKind::kAlloc);
  EXPECT_EQ(e.id, 3u);
  EXPECT_EQ((*r)->event_index(), 1u);
}

}  // namespace
}  // namespace hbmsim
