// ParseEventLine parses the common `alloc`/`free` lines in one pass and every
// other line field by field; both must give the same Event, whatever the
// Event held before.
#include "trace/text/event_parser.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace hbmsim {
namespace {

// An Event left over from a line that set every attribute.
Event Dirty() {
  Event e;
  e.kind = EventKind::kMark;
  e.id = 99;
  e.bytes = Bytes(77);
  e.device = DeviceId(3);
  e.stream = StreamId(4);
  e.time_us = 5;
  e.addr = 6;
  e.shape.emplace();
  e.tag = "old_tag";
  e.label = "old_label";
  return e;
}

std::string Describe(const Event& e) {
  return std::string(EventKindName(e.kind)) + " id=" + std::to_string(e.id) +
         " bytes=" + std::to_string(e.bytes.value()) + " device=" + std::to_string(e.device.value()) +
         " stream=" + std::to_string(e.stream.value()) +
         " t=" + (e.time_us ? std::to_string(*e.time_us) : "-") +
         " addr=" + (e.addr ? std::to_string(*e.addr) : "-") + " shape=" + (e.shape ? "set" : "-") +
         " tag=" + std::string(e.tag) + " label=" + std::string(e.label);
}

std::string Parse(const std::string& line) {
  Event e = Dirty();
  const absl::Status s = ParseEventLine(line, e);
  return s.ok() ? Describe(e) : std::string(s.message());
}

TEST(EventParserTest, CommonLinesMatchTheFieldByFieldParse) {
  // Each common line next to a spelling only the general parser takes.
  const std::pair<std::string, std::string> kPairs[] = {
      {"alloc 1 453735 t=0", "alloc  1\t453735 t=0"},
      {"a 7 256", "alloc 7 256 "},
      {"free 12 t=13", "free\t12  t=13"},
      {"f 0", "free 0 "},
      {"alloc 18446744073709551 1", "alloc 18446744073709551 1 device=0"},
  };
  for (const auto& [common, general] : kPairs) {
    EXPECT_EQ(Parse(common), Parse(general)) << common;
  }
  EXPECT_EQ(Parse("alloc 1 453735 t=0"),
            "alloc id=1 bytes=453735 device=0 stream=0 t=0 addr=- shape=- tag= label=");
  EXPECT_EQ(Parse("f 0"), "free id=0 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label=");
}

TEST(EventParserTest, AlmostCommonLinesKeepTheirMessages) {
  EXPECT_EQ(Parse("alloc 1"), "missing <bytes> in 'alloc <id> <bytes> [attrs]'");
  EXPECT_EQ(Parse("free 1x"), "bad <id>: '1x' is not a decimal number");
  EXPECT_EQ(Parse("free 1 2"), "unexpected extra field '2' in 'free <id> [attrs]'");
  EXPECT_EQ(Parse("alloc 1 2 t="), "empty value for t=");
  // 20 digits: past the one-pass parser's overflow-free range, still exact.
  EXPECT_EQ(Parse("free 18446744073709551615"),
            "free id=18446744073709551615 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label=");
}

}  // namespace
}  // namespace hbmsim
