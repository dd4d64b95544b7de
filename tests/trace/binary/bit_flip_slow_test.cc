// The bit-flip property of bit_flip_test.cc over a larger trace (about 2,000
// events of every kind, ~20 KB as .hbt): every single-bit flip of the plain
// and the compressed file is an error or decodes to the same trace. Labelled
// slow: about 300,000 decodes.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

namespace hbmsim {
namespace {

using testing::BinaryToText;
using testing::TextToBinary;

std::string LargerTrace() {
  std::string text = "# hbmsim-trace v1\n# source: bit flips, larger\n";
  uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int id = 1; id <= 700; ++id) {
    text += fmt::format("alloc {} {} t={} stream={} tag=t{}\n", id, (next() % 4096) << (next() % 20), id * 3,
                        next() % 3, next() % 40);
    if (id % 50 == 0) text += fmt::format("mark step={}\n", id / 50);
    if (id > 3 && next() % 2 == 0) text += fmt::format("free {}\n", id - 3);
    if (id % 97 == 0) text += fmt::format("program_load {} {} tag=prog\nprogram_unload {}\n", id, next(), id);
  }
  return text;
}

void ExpectEveryFlipCaught(bool compress) {
  absl::StatusOr<std::string> bytes = TextToBinary(LargerTrace(), compress);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<std::string> expected = BinaryToText(*bytes);
  ASSERT_TRUE(expected.ok()) << expected.status();
  int errors = 0;
  for (size_t at = 0; at < bytes->size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = *bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      absl::StatusOr<std::string> text = BinaryToText(damaged);
      if (!text.ok()) {
        ++errors;
        continue;
      }
      ASSERT_EQ(*text, *expected) << "byte " << at << " bit " << bit << " decoded to another trace";
    }
  }
  EXPECT_GT(errors, static_cast<int>(bytes->size()));
}

TEST(BitFlipSlow, EveryFlipOfALargerPlainFile) { ExpectEveryFlipCaught(false); }

TEST(BitFlipSlow, EveryFlipOfALargerCompressedFile) { ExpectEveryFlipCaught(true); }

}  // namespace
}  // namespace hbmsim
