// RMM logging_resource_adaptor CSV -> events, on fixtures written from the
// format description (tests/data/rmm) and on malformed rows.
#include "trace/rmm/rmm_reader.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/common/drain_events.h"
#include "trace/core/validator.h"

namespace hbmsim::trace::rmm {
namespace {

const std::string kData = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/rmm/";

// Every event of `reader` as "kind id bytes stream t addr|label"; the error, if any, last.
std::vector<std::string> Drain(RmmLogReader& reader) {
  return hbmsim::testing::DrainEvents(reader, [](const Event& e) {
    std::string text = fmt::format("{} {} {} s{} t{}", EventKindName(e.kind), e.id, e.bytes.value(),
                                   e.stream.value(), e.time_us.value_or(0));
    if (e.addr) text += fmt::format(" {:#x}", *e.addr);
    if (!e.label.empty()) text += fmt::format(" {}", e.label);
    return text;
  });
}

std::vector<std::string> DrainText(const std::string& csv) {
  auto reader = RmmLogReader::FromString(csv, "log.csv");
  return Drain(*reader);
}

TEST(RmmReaderTest, TwoStreamsPointerReuseAndAFailure) {
  auto reader = RmmLogReader::Open(kData + "two_streams.csv");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Drain(**reader),
            (std::vector<std::string>{
                "alloc 1 256 s0 t30108312812 0x7f8b2a000000",
                "alloc 2 1048576 s1 t30108312900 0x7f8b2a000100",
                "free 1 0 s0 t30108313002",
                "alloc 3 512 s1 t30108313050 0x7f8b2a000000",
                "mark 0 0 s0 t30108313100 rmm_allocate_failure:85899345920",  // a mark has no stream
                "free 2 0 s1 t30108313200",
                "free 3 0 s1 t30108313300",
            }));
  EXPECT_EQ((*reader)->streams(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{0x5601a3c0, 1}, {0x5601b000, 2}}));
  ASSERT_EQ((*reader)->failures().size(), 1u);
  const RecordedFailure& f = (*reader)->failures()[0];
  EXPECT_EQ(f.line, 6);
  EXPECT_EQ(f.bytes, 85899345920u);
  EXPECT_EQ(f.stream, StreamId(2));
  EXPECT_EQ(f.allocs_before, 3u);
  EXPECT_EQ((*reader)->Location(), kData + "two_streams.csv:8");
  EXPECT_EQ(*(*reader)->metadata().Find("source"), "rmm logging_resource_adaptor");
}

TEST(RmmReaderTest, MidnightAddsADayAndSmallStepsBackAreClamped) {
  auto reader = RmmLogReader::Open(kData + "midnight.csv");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(Drain(**reader), (std::vector<std::string>{
                                 "alloc 1 4096 s0 t86399999000 0x1000",
                                 "alloc 2 4096 s0 t86399999000 0x2000",
                                 "free 1 0 s0 t86400000500",
                                 "free 2 0 s0 t86401000000",
                             }));
}

TEST(RmmReaderTest, EpochSecondsDeallocateAliasAndBlankLines) {
  EXPECT_EQ(DrainText("Thread,Time,Action,Pointer,Size,Stream\r\n"
                      "\n"
                      "1,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020\r\n"
                      "1,1634567890.5,deallocate,0x7f8a40000000,1024,0x7f8a38001020\r\n"),
            (std::vector<std::string>{
                "alloc 1 1024 s1 t1634567890123456 0x7f8a40000000",
                "free 1 0 s1 t1634567890500000",
            }));
}

TEST(RmmReaderTest, FailureRowsMayCarryAnyNullPointer) {
  EXPECT_EQ(
      DrainText("Thread,Time,Action,Pointer,Size,Stream\n1,00:00:01.0,allocate failure,(nil),512,0x0\n"),
      (std::vector<std::string>{"mark 0 0 s0 t1000000 rmm_allocate_failure:512"}));
}

TEST(RmmReaderTest, MalformedInputNamesFileAndLine) {
  auto bad = RmmLogReader::Open(kData + "bad_free_size.csv");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(Drain(**bad).back(),
            "error: " + kData +
                "bad_free_size.csv:3: free of 0x1000 with size 100, but it was allocated "
                "with size 4096");

  const std::string h = "Thread,Time,Action,Pointer,Size,Stream\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1,00:00:00.1,allocate,0x10,4,0x0\n",
       "log.csv:1: not an RMM log: the first line must be 'Thread,Time,Action,Pointer,Size,Stream'"},
      {"", "log.csv:0: not an RMM log: no 'Thread,Time,Action,Pointer,Size,Stream' header"},
      {h + "1,00:00:00.1,allocate,0x10,4\n", "log.csv:2: expected 6 comma-separated fields, found 5"},
      {h + "1,00:00:00.1,resize,0x10,4,0x0\n", "log.csv:2: unknown action 'resize'"},
      {h + "1,00:00:00.1,allocate,0x10,-4,0x0\n", "log.csv:2: bad size: negative number '-4'"},
      {h + "1,25:00:00.1,allocate,0x10,4,0x0\n", "log.csv:2: bad time '25:00:00.1'"},
      {h + "1,00:00:00.1,allocate,zz,4,0x0\n", "log.csv:2: bad pointer 'zz'"},
      {h + "1,00:00:00.1,allocate,0x10,4,stream\n", "log.csv:2: bad stream 'stream'"},
      {h + "1,00:00:00.1,free,0x10,4,0x0\n", "log.csv:2: free of 0x10, which is not live"},
      {h + "1,00:00:00.1,allocate,0x10,4,0x0\n1,00:00:00.2,allocate,0x10,8,0x0\n",
       "log.csv:3: allocate of 0x10, which is still live (buffer 1)"},
      {h + "1,00:00:00.1,allocate,0x10," + std::string(5000, '9') + ",0x0\n",
       "log.csv:2: line longer than 4096 characters"},
  };
  for (const auto& [csv, message] : cases) {
    EXPECT_EQ(DrainText(csv).back(), "error: " + message) << csv.substr(0, 80);
  }
}

TEST(RmmReaderTest, EventsPassTheTraceValidator) {
  for (const char* name : {"two_streams.csv", "midnight.csv"}) {
    auto reader = RmmLogReader::Open(kData + name);
    ASSERT_TRUE(reader.ok());
    TraceValidator validator;
    Event e;
    int events = 0;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(e);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      EXPECT_TRUE(validator.Check(e).ok()) << (*reader)->Location();
      ++events;
    }
    EXPECT_EQ(events, std::string(name) == "midnight.csv" ? 4 : 7);
    EXPECT_EQ(validator.buffers().size(), 0u) << name;  // every buffer was freed
  }
}

TEST(RmmReaderTest, RecognisesItsHeader) {
  EXPECT_TRUE(RmmLogReader::IsRmmHeader("Thread,Time,Action,Pointer,Size,Stream"));
  EXPECT_TRUE(RmmLogReader::IsRmmHeader("Thread,Time,Action,Pointer,Size,Stream\r"));
  EXPECT_FALSE(RmmLogReader::IsRmmHeader("Thread,Time,Action,Pointer,Size"));
  EXPECT_FALSE(RmmLogReader::IsRmmHeader("# hbmsim-trace v1"));
}

TEST(RmmReaderTest, MissingFileIsNotFound) {
  auto missing = RmmLogReader::Open("/nonexistent/rmm.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/rmm.csv: cannot read");
}

}  // namespace
}  // namespace hbmsim::trace::rmm
