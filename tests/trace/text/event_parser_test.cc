// ParseEventLine parses the common `alloc`/`free` lines in one pass and every
// other line field by field; both must give the same Event, whatever the
// Event held before.
#include "trace/text/event_parser.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

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
  e.attrs = "old=attrs";
  return e;
}

std::string Describe(const Event& e) {
  return std::string(EventKindName(e.kind)) + " id=" + std::to_string(e.id) +
         " bytes=" + std::to_string(e.bytes.value()) + " device=" + std::to_string(e.device.value()) +
         " stream=" + std::to_string(e.stream.value()) +
         " t=" + (e.time_us ? std::to_string(*e.time_us) : "-") +
         " addr=" + (e.addr ? std::to_string(*e.addr) : "-") + " shape=" + (e.shape ? "set" : "-") +
         " tag=" + std::string(e.tag) + " label=" + std::string(e.label) + " attrs=" + std::string(e.attrs);
}

std::string Parse(const std::string& line) {
  Event e = Dirty();
  std::string other = "stale";
  const absl::Status s = ParseEventLine(line, e, other);
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
      // The attributes a generated or recorded trace carries.
      {"alloc 1 100 t=3 tag=weights", "alloc 1 100 tag=weights  t=3"},
      {"alloc 2 64 stream=2 shape=bf16[4,8] device=1", "alloc 2 64 device=1\tstream=2 shape=bf16[4,8]"},
      {"free 2 t=9 stream=2", "free 2 stream=2 t=9 "},
      {"alloc 3 5 tag=caf\xc3\xa9", "alloc 3 5 tag=caf\xc3\xa9 "},
  };
  for (const auto& [common, general] : kPairs) {
    EXPECT_EQ(Parse(common), Parse(general)) << common;
  }
  EXPECT_EQ(Parse("alloc 1 453735 t=0"),
            "alloc id=1 bytes=453735 device=0 stream=0 t=0 addr=- shape=- tag= label= attrs=");
  EXPECT_EQ(Parse("f 0"), "free id=0 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label= attrs=");
  EXPECT_EQ(Parse("alloc 2 64 stream=2 shape=bf16[4,8] device=1 tag=x"),
            "alloc id=2 bytes=64 device=1 stream=2 t=- addr=- shape=set tag=x label= attrs=");
}

// The format's attributes are open: one it does not define is kept, in line
// order, whatever the event, and the known ones around it still count.
TEST(EventParserTest, OtherAttributesAreKeptInLineOrder) {
  EXPECT_EQ(Parse("alloc 1 8 step=3 t=1\tlayer=l0.qkv"),
            "alloc id=1 bytes=8 device=0 stream=0 t=1 addr=- shape=- tag= label= attrs=step=3 layer=l0.qkv");
  EXPECT_EQ(Parse("mark forward_end step=0"),
            "mark id=0 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label=forward_end attrs=step=0");
  EXPECT_EQ(Parse("mark step=3"),
            "mark id=0 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label=step=3 attrs=");
  EXPECT_EQ(Parse("free 4 note= t=2"),
            "free id=4 bytes=0 device=0 stream=0 t=2 addr=- shape=- tag= label= attrs=note=");
  EXPECT_EQ(Parse("program_run 5 x=1 x=2"),
            "program_run id=5 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label= attrs=x=1 x=2");
  EXPECT_EQ(Parse("alloc 1 8 =3"), "attribute '=3' has no name before '='");
  EXPECT_EQ(Parse("alloc 1 8 k\xff=1"), "attribute 'k\xff' is not valid UTF-8");
  // A defined attribute in the wrong place is still an error, not an open one.
  EXPECT_EQ(Parse("free 1 tag=x"), "attribute tag= is not allowed on free (only on alloc and program_load)");
}

TEST(EventParserTest, AlmostCommonLinesKeepTheirMessages) {
  EXPECT_EQ(Parse("alloc 1"), "missing <bytes> in 'alloc <id> <bytes> [attrs]'");
  EXPECT_EQ(Parse("free 1x"), "bad <id>: '1x' is not a decimal number");
  EXPECT_EQ(Parse("free 1 2"), "unexpected extra field '2' in 'free <id> [attrs]'");
  EXPECT_EQ(Parse("alloc 1 2 t="), "empty value for t=");
  // 20 digits: past the one-pass parser's overflow-free range, still exact.
  EXPECT_EQ(Parse("free 18446744073709551615"),
            "free id=18446744073709551615 bytes=0 device=0 stream=0 t=- addr=- shape=- tag= label= attrs=");
  EXPECT_EQ(Parse("alloc 1 2 t=1 t=2"), "duplicate attribute t=");
  EXPECT_EQ(Parse("alloc 1 2 tag=\xff"), "tag= is not valid UTF-8");
  EXPECT_EQ(Parse("alloc 1 2 shape=q8[2]"), "bad shape=: unknown dtype 'q8' in shape 'q8[2]'");
}

// The one-pass parser reads numbers eight bytes at a time where eight bytes
// of the line remain and byte by byte near its end: every length from 1 to
// 21 digits, every digit in every position, and a stray byte at each
// position, next to suffixes that put the number far from and at the end of
// the line, must parse as the field-by-field parser does (its spelling with
// a tab is never common).
TEST(EventParserTest, NumbersOfEveryLengthAndPlaceMatchTheGeneralParse) {
  const std::string kSuffixes[] = {"", " t=1", " tag=abcdefghij", " t=12 stream=3"};
  for (int length = 1; length <= 21; ++length) {
    for (char digit = '0'; digit <= '9'; ++digit) {
      for (int at = 0; at < length; ++at) {
        std::string number(static_cast<size_t>(length), '1');
        number[static_cast<size_t>(at)] = digit;
        std::string spoiled = number;
        spoiled[static_cast<size_t>(at)] = digit == '0' ? '/' : (digit == '9' ? ':' : '\x80');
        for (const std::string& n : {number, spoiled}) {
          for (const std::string& suffix : kSuffixes) {
            ASSERT_EQ(Parse("alloc " + n + " 8" + suffix), Parse("alloc\t" + n + " 8" + suffix)) << n << suffix;
            ASSERT_EQ(Parse("alloc 1 " + n + suffix), Parse("alloc\t1 " + n + suffix)) << n << suffix;
            ASSERT_EQ(Parse("free 7 t=" + n + suffix), Parse("free\t7 t=" + n + suffix)) << n << suffix;
          }
        }
      }
    }
  }
  EXPECT_EQ(Parse("alloc 12345678 1234567890123456789 t=00000000000000000042 tag=w"),
            "alloc id=12345678 bytes=1234567890123456789 device=0 stream=0 t=42 addr=- shape=- tag=w label= attrs=");
}

}  // namespace
}  // namespace hbmsim
