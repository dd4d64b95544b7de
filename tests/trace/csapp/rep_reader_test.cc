// CS:APP Malloc Lab .rep -> events, on a fixture written from the format
// description (tests/data/csapp) and on malformed traces.
#include "trace/csapp/rep_reader.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/common/drain_events.h"
#include "trace/core/validator.h"

namespace hbmsim::trace::csapp {
namespace {

const std::string kData = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/csapp/";

// Every event of `reader` as "kind id bytes tag"; the error, if any, last.
std::vector<std::string> Drain(RepReader& reader) {
  return hbmsim::testing::DrainEvents(reader, [](const Event& e) {
    std::string text = fmt::format("{} {} {}", EventKindName(e.kind), e.id, e.bytes.value());
    if (!e.tag.empty()) text += fmt::format(" {}", e.tag);
    return text;
  });
}

// The error of opening or reading `rep`, or "ok".
std::string ErrorOf(std::string_view rep) {
  absl::StatusOr<std::unique_ptr<RepReader>> reader = RepReader::FromString(rep, "t.rep");
  if (!reader.ok()) return std::string(reader.status().message());
  const std::vector<std::string> events = Drain(**reader);
  if (!events.empty() && events.back().starts_with("error: ")) return events.back().substr(7);
  return "ok";
}

TEST(RepReaderTest, ReallocMovesAndIdsAreReusedAfterTheirFree) {
  auto reader = RepReader::Open(kData + "realloc_moves.rep");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Drain(**reader), (std::vector<std::string>{
                                 "alloc 1 1000 rep:0",
                                 "alloc 2 200 rep:1",
                                 "alloc 3 1500 rep:0:realloc",
                                 "free 1 0",
                                 "alloc 4 300 rep:2",
                                 "free 2 0",
                                 "alloc 5 100 rep:0:realloc",
                                 "free 3 0",
                                 "free 5 0",
                                 "alloc 6 64 rep:1",
                                 "free 4 0",
                             }));
  const RepHeader& h = (*reader)->header();
  EXPECT_EQ(h.line1, 4096u);
  EXPECT_EQ(h.num_ids, 3u);
  EXPECT_EQ(h.num_ops, 9u);
  EXPECT_EQ(h.line4, 1u);
  EXPECT_EQ((*reader)->Location(), kData + "realloc_moves.rep:13");
  EXPECT_EQ(*(*reader)->metadata().Find("source"), "cs:app malloc lab .rep");
  EXPECT_EQ(*(*reader)->metadata().Find("rep_header_1"), "4096");
  EXPECT_EQ(*(*reader)->metadata().Find("rep_operations"), "9");
}

TEST(RepReaderTest, EventsPassTheTraceValidator) {
  auto reader = RepReader::Open(kData + "realloc_moves.rep");
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
  EXPECT_EQ(events, 11);
  EXPECT_EQ(validator.buffers().size(), 1u);  // rep id 1's second block is never freed
}

TEST(RepReaderTest, BlankLinesAndSurroundingBlanksAreAllowed) {
  absl::StatusOr<std::unique_ptr<RepReader>> reader =
      RepReader::FromString("\n 100\r\n1\n\n2\n0\na 0   16\r\n\n  f\t0 \n", "t.rep");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Drain(**reader), (std::vector<std::string>{"alloc 1 16 rep:0", "free 1 0"}));
  EXPECT_EQ((*reader)->header().lines, (std::array<int, 4>{2, 3, 5, 6}));
}

TEST(RepReaderTest, MalformedInputNamesFileAndLine) {
  const std::string h = "100\n2\n3\n1\n";  // 2 ids, 3 operations
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"100\n2\n", "t.rep:2: the header ends after 2 of its 4 lines (heap size, ids, operations, weight)"},
      {"100\nx\n3\n1\n", "t.rep:2: header line 2 (number of ids) must be a plain number, found 'x'"},
      {"100\n2\n-3\n1\n", "t.rep:3: header line 3 (number of operations) must be a plain number, found '-3'"},
      {h + "m 0 8\n", "t.rep:5: unknown operation 'm' (expected 'a id bytes', 'r id bytes' or 'f id')"},
      {h + "a 0\n", "t.rep:5: 'a' takes 3 fields (op id bytes), found 2"},
      {h + "f 0 8\n", "t.rep:5: 'f' takes 2 fields (op id), found 3"},
      {h + "a x 8\n", "t.rep:5: bad id: 'x' is not a decimal number"},
      {h + "a 0 -8\n", "t.rep:5: bad size: negative number '-8'"},
      {h + "a 2 8\n", "t.rep:5: id 2 is not below the 2 ids that line 2 declares"},
      {h + "a 0 8\na 0 8\n", "t.rep:6: a of id 0, which is still live"},
      {h + "r 1 8\n", "t.rep:5: r of id 1, which is not live"},
      {h + "f 1\n", "t.rep:5: f of id 1, which is not live"},
      {h + "a 0 8\na 1 8\nf 0\nf 1\n", "t.rep:8: more operations than the 3 that line 3 declares"},
      {h + "a 0 8\na 1 8\n", "t.rep:3: the header declares 3 operations, but the file has 2"},
      {h + "a 0 8\nf 0\na 0 8\n", "t.rep:2: the header declares 2 ids, but the largest id used is 0"},
      {"1\n2\n0\n1\n", "t.rep:2: the header declares 2 ids, but no operation uses one"},
      {h + "a 0 " + std::string(5000, '9') + "\n", "t.rep:5: line longer than 4096 characters"},
  };
  for (const auto& [rep, message] : cases) EXPECT_EQ(ErrorOf(rep), message) << rep;
  EXPECT_EQ(ErrorOf("1\n0\n0\n1\n"), "ok");  // an empty trace is a trace
}

// A header that declares four billion operations reserves nothing: only what
// follows is read.
TEST(RepReaderTest, HugeDeclaredCountsReserveNothing) {
  EXPECT_EQ(ErrorOf("1\n4000000000\n4000000000\n1\na 0 8\n"),
            "t.rep:3: the header declares 4000000000 operations, but the file has 1");
}

TEST(RepReaderTest, RecognisesItsHeader) {
  EXPECT_TRUE(RepReader::LooksLikeRep("20000\n3\n8\n1\n"));
  EXPECT_TRUE(RepReader::LooksLikeRep("\n  20000\r\n"));
  EXPECT_TRUE(RepReader::LooksLikeRep("20000"));
  EXPECT_FALSE(RepReader::LooksLikeRep("1 0x10 8 0\n"));
  EXPECT_FALSE(RepReader::LooksLikeRep("alloc 1 8\n"));
  EXPECT_FALSE(RepReader::LooksLikeRep("# 1\n"));
  EXPECT_FALSE(RepReader::LooksLikeRep(""));
}

TEST(RepReaderTest, MissingFileIsNotFound) {
  auto missing = RepReader::Open("/nonexistent/t.rep");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/t.rep: cannot read");
}

}  // namespace
}  // namespace hbmsim::trace::csapp
