#include "trace/text/text_writer.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/text/trace_test_util.h"

namespace hbmsim {
namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads `path` and writes it back out canonically.
std::string Rewrite(std::unique_ptr<TextTraceReader> reader) {
  std::ostringstream out;
  TextTraceWriter writer(out);
  EXPECT_TRUE(writer.WriteHeader(reader->metadata()).ok());
  Event e;
  while (true) {
    absl::StatusOr<bool> got = reader->Next(e);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || !*got) break;
    absl::Status s = writer.Write(e);
    EXPECT_TRUE(s.ok()) << s;
  }
  EXPECT_TRUE(writer.Flush().ok());
  return out.str();
}

std::string RewriteFixture(const std::string& name) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader =
      TextTraceReader::Open(testing::TraceFixture(name));
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? Rewrite(*std::move(reader)) : "";
}

std::string RewriteText(std::string text) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::FromString(std::move(text));
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? Rewrite(*std::move(reader)) : "";
}

std::string Line(const Event& e) {
  fmt::memory_buffer out;
  absl::Status s = TextTraceWriter::FormatEvent(e, out);
  return s.ok() ? fmt::to_string(out) : std::string(s.message());
}

TEST(TextWriterTest, CanonicalFixturesRoundTripByteForByte) {
  for (const char* name : {"valid/canonical.trace", "valid/empty.trace"}) {
    EXPECT_EQ(RewriteFixture(name), FileBytes(testing::TraceFixture(name))) << name;
  }
}

// Every valid fixture reaches its canonical form in one rewrite, and the
// canonical form is a fixed point.
TEST(TextWriterTest, EveryValidFixtureRewritesToAFixedPoint) {
  for (const char* name : {"valid/canonical.trace", "valid/empty.trace", "valid/spec_example.trace",
                           "valid/aliases_units.trace", "valid/crlf.trace"}) {
    const std::string once = RewriteFixture(name);
    EXPECT_EQ(RewriteText(once), once) << name;
  }
}

TEST(TextWriterTest, SpecExampleInCanonicalForm) {
  EXPECT_EQ(RewriteFixture("valid/spec_example.trace"),
            "# hbmsim-trace v1\n# source: hand-written example\nalloc 1 1000 tag=weights\n"
            "alloc 2 4096 shape=f32[32,32]\nmark step=0\nfree 1\nfree_requested 2\nfree_completed 2\n");
}

TEST(TextWriterTest, AliasesUnitsAndBlanksInCanonicalForm) {
  EXPECT_EQ(RewriteFixture("valid/aliases_units.trace"),
            "# hbmsim-trace v1\n# source: aliases, units, blanks and comments\n"
            "alloc 1 2097152 tag=x\nalloc 2 1024 shape=f32[2,3] addr=0x1000\nfree 1\n"
            "alloc 3 1073741824 device=2\nfree 2 t=3\nfree 3 t=3 device=2\nprogram_load 9 1099511627776\n");
  EXPECT_EQ(RewriteFixture("valid/crlf.trace"),
            "# hbmsim-trace v1\n# source: windows\nalloc 1 10\nfree 1\nmark done\n");
}

TEST(TextWriterTest, AttributeOrderAndDefaults) {
  Event e;
  e.kind = EventKind::kAlloc;
  e.id = 42;
  e.bytes = Bytes(512);
  e.device = DeviceId(1);
  e.addr = 0xABC;
  e.shape = TensorShape{DType::kS8, {2, 256}};
  e.tag = "act";
  e.stream = StreamId(3);
  e.time_us = 0;
  EXPECT_EQ(Line(e), "alloc 42 512 t=0 stream=3 tag=act shape=s8[2,256] addr=0xabc device=1");
  e.device = DeviceId(0);
  e.stream = StreamId(0);
  e.time_us.reset();
  EXPECT_EQ(Line(e), "alloc 42 512 tag=act shape=s8[2,256] addr=0xabc");
  Event f;
  f.kind = EventKind::kFreeCompleted;
  f.id = 42;
  f.bytes = Bytes(512);  // a free's size has no field: dropped
  EXPECT_EQ(Line(f), "free_completed 42");
}

TEST(TextWriterTest, RefusesWhatTheFormatCannotCarry) {
  Event e;
  e.kind = EventKind::kAlloc;
  e.id = 1;
  e.tag = "two words";
  EXPECT_EQ(Line(e), "tag 'two words' holds a blank, line break or NUL, which a trace cannot hold");
  e.tag = "\xff";
  EXPECT_EQ(Line(e), "tag is not valid UTF-8, which a trace cannot hold");
  Event m;
  m.kind = EventKind::kMark;
  EXPECT_EQ(Line(m), "a mark without a label, which a trace cannot hold");
  m.label = "a\nb";
  EXPECT_EQ(Line(m), "mark label 'a\nb' holds a blank, line break or NUL, which a trace cannot hold");
  Event r;
  r.kind = EventKind::kProgramRun;
  r.stream = StreamId(1);
  EXPECT_EQ(Line(r), "stream= on program_run: a trace holds it only on alloc and free*");
  r.stream = StreamId(0);
  r.tag = "x";
  EXPECT_EQ(Line(r), "tag= on program_run: a trace holds it only on alloc and program_load");
  Event fr;
  fr.kind = EventKind::kFree;
  fr.addr = 4;
  EXPECT_EQ(Line(fr), "shape= or addr= on free: a trace holds them only on alloc");
}

TEST(TextWriterTest, HeaderAndMetadata) {
  std::ostringstream out;
  {
    TextTraceWriter writer(out);
    TraceMetadata md;
    md.entries = {{"source", "  padded  "}, {"empty", ""}};
    ASSERT_TRUE(writer.WriteHeader(md).ok());
    EXPECT_EQ(writer.WriteHeader(md).message(), "the trace header must be written once, before any event");
  }
  EXPECT_EQ(out.str(), "# hbmsim-trace v1\n# source: padded\n# empty:\n");

  std::ostringstream bad;
  TextTraceWriter writer(bad);
  TraceMetadata md;
  md.entries = {{"two words", "x"}};
  EXPECT_EQ(writer.WriteHeader(md).message(),
            "metadata key 'two words' is empty or holds a blank or ':', which a trace's header cannot hold");
  md.entries = {{"k", "a\nb"}};
  EXPECT_EQ(writer.WriteHeader(md).message(),
            "metadata 'k' holds a line break or NUL, which a trace's header cannot hold");
}

TEST(TextWriterTest, WriteWithoutHeaderWritesABareOne) {
  std::ostringstream out;
  {
    TextTraceWriter writer(out);
    Event e;
    e.kind = EventKind::kMark;
    e.label = "x";
    ASSERT_TRUE(writer.Write(e).ok());
    e.label = "";
    EXPECT_FALSE(writer.Write(e).ok());  // refused events leave no trace in the output
  }
  EXPECT_EQ(out.str(), "# hbmsim-trace v1\nmark x\n");
}

}  // namespace
}  // namespace hbmsim
