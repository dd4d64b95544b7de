// Single-bit flips of a .hbt and a .hbt.zst at every bit of every byte: each
// damaged file is an error (the decoder's, zstd's frame checksum, or the end
// record's crc32, docs/formats/binary-trace.md) or decodes to exactly the
// trace of the undamaged file. Version 1 files, which carry no checksum, must
// still read.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

namespace hbmsim {
namespace {

using testing::BinaryToText;
using testing::FileBytes;
using testing::TextToBinary;

const char kFlippedTrace[] =
    "# hbmsim-trace v1\n# source: bit flips\n"
    "alloc 1 4096 t=1 tag=weights shape=f32[32,32]\nalloc 2 3145728 t=2 stream=1 tag=act addr=0x1000\n"
    "mark step=0\nfree_requested 2 stream=1\nfree_completed 2 stream=1\nprogram_load 1 10 tag=p\n"
    "program_run 1 device=0\nprogram_unload 1\nalloc 3 2097152 t=5\nfree 1 t=9\nfree 3\n";

struct FlipCount {
  int errors = 0;
  int same = 0;
  std::string first_different;  // "byte B bit K" of a flip that decoded to another trace
};

FlipCount FlipEveryBit(const std::string& bytes, const std::string& expected_text) {
  FlipCount count;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      absl::StatusOr<std::string> text = BinaryToText(damaged);
      if (!text.ok()) {
        ++count.errors;
      } else if (*text == expected_text) {
        ++count.same;
      } else if (count.first_different.empty()) {
        count.first_different = fmt::format("byte {} bit {}", at, bit);
      }
    }
  }
  return count;
}

void ExpectEveryFlipCaught(bool compress) {
  absl::StatusOr<std::string> bytes = TextToBinary(kFlippedTrace, compress);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::string> text = BinaryToText(*bytes);
  ASSERT_TRUE(text.ok()) << text.status();
  const FlipCount c = FlipEveryBit(*bytes, *text);
  EXPECT_EQ(c.first_different, "");
  EXPECT_EQ(c.errors + c.same, static_cast<int>(bytes->size() * 8));
  EXPECT_GT(c.errors, 0);
}

TEST(BitFlip, EveryFlipOfAPlainFileIsAnErrorOrTheSameTrace) { ExpectEveryFlipCaught(false); }

TEST(BitFlip, EveryFlipOfACompressedFileIsAnErrorOrTheSameTrace) { ExpectEveryFlipCaught(true); }

TEST(BitFlip, TheChecksumNamesTheEndRecordsByte) {
  absl::StatusOr<std::string> bytes = TextToBinary(kFlippedTrace);
  ASSERT_TRUE(bytes.ok());
  // The size of alloc 2 (3145728 = 0x300000) becomes 2097152 (0x200000): a valid varint.
  const std::string before = "\x80\x80\xc0\x01";
  const size_t at = bytes->find(before);
  ASSERT_NE(at, std::string::npos);
  std::string damaged = *bytes;
  damaged[at + 2] = static_cast<char>(0x80);
  const size_t end_record = bytes->size() - 4 - 2;  // 0F, the count (one byte), the crc32
  absl::StatusOr<std::string> text = BinaryToText(damaged);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message().substr(0, fmt::format("t.hbt: byte {}: checksum mismatch", end_record).size()),
            fmt::format("t.hbt: byte {}: checksum mismatch", end_record));
}

TEST(BitFlip, VersionOneFilesStillRead) {
  for (const char* name : {"fragmentation.hbt", "fragmentation.hbt.zst"}) {
    SCOPED_TRACE(name);
    const std::string v1 = FileBytes(std::string(HBMSIM_SOURCE_DIR) + "/tests/data/hbt_v1/" + name);
    if (v1.starts_with("\x89HBT")) {
      ASSERT_EQ(v1.substr(8, 1), "\x01") << "not a version 1 file";
    }
    absl::StatusOr<std::string> text = BinaryToText(v1);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(text->substr(0, 17), "# hbmsim-trace v1");
    EXPECT_NE(text->find("alloc 5 100663296"), std::string::npos);
  }
}

}  // namespace
}  // namespace hbmsim
