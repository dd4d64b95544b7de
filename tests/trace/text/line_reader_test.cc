#include "trace/text/line_reader.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

// Lines of `text` read with the given cap and block size, joined with '|';
// errors appear as "<line>:ERROR <message>" and reading goes on after them.
std::string Lines(std::string text, size_t max_line, size_t block) {
  LineReader reader(StringSource(std::move(text)), max_line, block);
  std::vector<std::string> lines;
  std::string_view line;
  while (true) {
    absl::StatusOr<bool> got = reader.Next(line);
    if (!got.ok()) {
      lines.push_back(std::to_string(reader.line_number()) + ":ERROR " + std::string(got.status().message()));
      continue;
    }
    if (!*got) break;
    lines.emplace_back(line);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "|") + lines[i];
  return out;
}

// Endless input without a newline: `size` bytes of 'x', produced on demand.
class EndlessLineSource : public ByteSource {
 public:
  explicit EndlessLineSource(uint64_t size) : left_(size) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    const size_t count = n < left_ ? n : static_cast<size_t>(left_);
    std::fill(dst, dst + count, 'x');
    left_ -= count;
    return count;
  }

 private:
  uint64_t left_;
};

TEST(LineReaderTest, SplitsLinesAcrossBlocks) {
  EXPECT_EQ(Lines("ab\ncd\n\nef", 16, 3), "ab|cd||ef");
  EXPECT_EQ(Lines("", 16, 3), "");
  EXPECT_EQ(Lines("\n", 16, 3), "");
  EXPECT_EQ(Lines("\na\n\n", 16, 3), "|a|");
  EXPECT_EQ(Lines("one\n", 16, 1), "one");
}

TEST(LineReaderTest, StripsCrlf) {
  EXPECT_EQ(Lines("ab\r\ncd\r\n\r\nef\r", 16, 2), "ab|cd||ef");
  // Only the "\r" right before the end of the line goes; others stay.
  EXPECT_EQ(Lines("a\rb\r\n", 16, 2), "a\rb");
}

TEST(LineReaderTest, CapsLineLengthAndGoesOn) {
  EXPECT_EQ(Lines("12345678\n", 8, 3), "12345678");
  EXPECT_EQ(Lines("12345678\r\n", 8, 3), "12345678");  // the "\r" is not content
  EXPECT_EQ(Lines("123456789\nok\n", 8, 3), "1:ERROR line longer than 8 bytes|ok");
  EXPECT_EQ(Lines("a\n123456789012345678901234567890\nb", 8, 3), "a|2:ERROR line longer than 8 bytes|b");
  EXPECT_EQ(Lines("123456789", 8, 16), "1:ERROR line longer than 8 bytes");
}

TEST(LineReaderTest, DefaultCapIsOneMebibyte) {
  const std::string longest(LineReader::kMaxLineBytes, 'x');
  EXPECT_EQ(Lines(longest + "\nok", LineReader::kMaxLineBytes, LineReader::kBlockBytes), longest + "|ok");
  EXPECT_EQ(Lines(longest + "y\nok", LineReader::kMaxLineBytes, LineReader::kBlockBytes),
            "1:ERROR line longer than 1048576 bytes|ok");
}

// A gigabyte without a newline is rejected after reading about one buffer of
// it, and skipping the rest keeps memory at that one buffer.
TEST(LineReaderTest, GigabyteLineEndsInBoundedMemory) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  LineReader reader(std::make_unique<EndlessLineSource>(kGiB));
  std::string_view line;
  absl::StatusOr<bool> got = reader.Next(line);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "line longer than 1048576 bytes");
  EXPECT_EQ(reader.line_number(), 1u);
  EXPECT_LE(reader.bytes_read(), reader.buffer_capacity());
  EXPECT_EQ(reader.buffer_capacity(), 2u * 1048576 + 2);
  // Going on skips the rest of the line through the same buffer.
  got = reader.Next(line);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(*got);
  EXPECT_EQ(reader.bytes_read(), kGiB);
}

}  // namespace
}  // namespace hbmsim
