// Lossless: every trace in the repository goes text -> binary -> text to the
// very bytes the text writer alone produces, plain and compressed, and
// binary -> text -> binary gives the same bytes again.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/binary/binary_test_util.h"

namespace hbmsim {
namespace {

namespace fs = std::filesystem;
using testing::BinaryToText;
using testing::FileBytes;
using testing::TextToBinary;

// Every text trace the repository ships; new ones join the test by existing.
std::vector<std::string> RepositoryTraces() {
  const fs::path root(HBMSIM_SOURCE_DIR);
  std::vector<std::string> out;
  for (const char* dir : {"tests/data/traces/valid", "configs/examples", "tests/data/torch"}) {
    if (!fs::exists(root / dir)) continue;
    for (const fs::directory_entry& f : fs::directory_iterator(root / dir)) {
      if (f.path().extension() == ".trace") out.push_back(f.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<std::unique_ptr<TextTraceReader>> r = TextTraceReader::FromString(text, "t.trace");
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> out = testing::ToText(**r);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

TEST(RoundTrip, FindsTheRepositoryTraces) {
  const std::vector<std::string> traces = RepositoryTraces();
  // 5 valid fixtures + 3 examples today; more may join, none may vanish.
  EXPECT_GE(traces.size(), 8u);
}

TEST(RoundTrip, EveryRepositoryTraceIsLossless) {
  for (const std::string& path : RepositoryTraces()) {
    SCOPED_TRACE(path);
    const std::string canonical = Canonical(FileBytes(path));
    ASSERT_FALSE(canonical.empty());
    for (const bool compress : {false, true}) {
      absl::StatusOr<std::string> binary = TextToBinary(FileBytes(path), compress);
      ASSERT_TRUE(binary.ok()) << binary.status();
      absl::StatusOr<std::string> back = BinaryToText(*binary);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, canonical);
      absl::StatusOr<std::string> again = TextToBinary(*back, compress);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ(*again, *binary);
    }
  }
}

TEST(RoundTrip, CanonicalFixtureComesBackByteForByte) {
  const std::string path = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/traces/valid/canonical.trace";
  absl::StatusOr<std::string> binary = TextToBinary(FileBytes(path));
  ASSERT_TRUE(binary.ok()) << binary.status();
  absl::StatusOr<std::string> back = BinaryToText(*binary);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, FileBytes(path));
}

TEST(RoundTrip, ExtremeValuesSurviveTheDeltas) {
  const std::string text =
      "# hbmsim-trace v1\n"
      "alloc 18446744073709551615 18446744073709551615 t=18446744073709551615 addr=0xffffffffffffffff\n"
      "alloc 0 0 t=18446744073709551615 stream=18446744073709551615 addr=0x0 device=18446744073709551615\n"
      "free 18446744073709551615\n"
      "program_load 5 1 tag=p device=3\n"
      "program_run 5 device=3\n"
      "alloc 1 7 tag=p shape=c128[0,18446744073709551615,1,2,3,4,5,6]\n"
      "mark step=0\n";
  absl::StatusOr<std::string> binary = TextToBinary(text);
  ASSERT_TRUE(binary.ok()) << binary.status();
  absl::StatusOr<std::string> back = BinaryToText(*binary);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, text);
}

// Open attributes: each event's other attributes come back after the defined
// ones, in the order read, through text and through .hbt (ext bit 0x08).
TEST(RoundTrip, OtherAttributesAreKeptInOrder) {
  const std::string path = std::string(HBMSIM_SOURCE_DIR) + "/tests/data/traces/valid/open_attributes.trace";
  const std::string canonical =
      "# hbmsim-trace v1\n"
      "# source: a user's own instrumentation, with annotations hbmsim does not define\n"
      "mark step=0\n"
      "mark forward_end step=0 phase=fwd\n"
      "alloc 1 4096 t=5 tag=activation layer=l0.qkv\n"
      "alloc 2 512 t=6 rank=3\n"
      "program_load 7 8192 build=debug\n"
      "program_run 7 step=0\n"
      "free 1 t=9 note=\n"
      "mark backward_begin\n"
      "free 2 t=10 why=done\n"
      "program_unload 7 t=11 reason=eof\n";
  EXPECT_EQ(Canonical(FileBytes(path)), canonical);
  absl::StatusOr<std::string> binary = TextToBinary(FileBytes(path));
  ASSERT_TRUE(binary.ok()) << binary.status();
  absl::StatusOr<std::string> back = BinaryToText(*binary);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, canonical);
  // `alloc 2 512 t=6 rank=3`: head 0x90 (alloc, t=, ext), ext 0x08, id delta +1,
  // 512, t delta +1, then the attributes as a string.
  EXPECT_NE(binary->find(std::string("\x90\x08\x02\x80\x04\x02\x06rank=3", 13)), std::string::npos);
}

// The exact layout of a small file: magic, version, flags, metadata, records.
TEST(RoundTrip, EncodingIsTheDocumentedOne) {
  absl::StatusOr<std::string> binary =
      TextToBinary("# hbmsim-trace v1\n# k: v\nalloc 1 300 t=2 tag=w\nalloc 2 1 tag=w\nfree 1\nmark m\n");
  ASSERT_TRUE(binary.ok()) << binary.status();
  const std::string expected = std::string("\x89HBT\r\n\x1a\n", 8) +              // magic
                               std::string("\x02\x00\x01", 3) +                   // version, flags, 1 entry
                               std::string("\x01k\x01v", 4) +                     // key, value
                               std::string("\x50\x02\xac\x02\x04\x00\x01w", 8) +  // alloc 1 300 t=2 tag=w
                               std::string("\x40\x02\x01\x01", 4) +  // alloc 2 1 tag=<dictionary 1>
                               std::string("\x01\x01", 2) +          // free 1: zigzag(1 - 2) = 1
                               std::string("\x07\x01m", 3) +         // mark m
                               std::string("\x0f\x04", 2) +          // end, 4 events
                               std::string("\xb0\x26\xb9\xbc", 4);  // crc32 of all the above, little-endian
  EXPECT_EQ(*binary, expected);
}

// A trace with a few tags, long enough that its records take the decoder's
// fast path, where a tag from the dictionary is read: every tag comes back.
TEST(RoundTrip, ManyAllocsWithAFewTagsKeepEachTag) {
  const char* tags[] = {"weights", "activation", "grad"};
  std::string text = "# hbmsim-trace v1\n";
  for (int i = 1; i <= 300; ++i) text += fmt::format("alloc {} {} tag={}\n", i, 512 * i, tags[i % 3]);
  for (int i = 1; i <= 300; ++i) text += fmt::format("free {}\n", i);
  absl::StatusOr<std::string> binary = TextToBinary(text);
  ASSERT_TRUE(binary.ok()) << binary.status();
  absl::StatusOr<std::string> back = BinaryToText(*binary);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, text);
}

TEST(RoundTrip, CompressedFilesAreStandardZstdFrames) {
  absl::StatusOr<std::string> binary = TextToBinary("alloc 1 1\nfree 1\n", /*compress=*/true);
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(binary->substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  absl::StatusOr<std::unique_ptr<BinaryTraceReader>> r = BinaryTraceReader::FromString(*binary);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)->compressed());
}

}  // namespace
}  // namespace hbmsim
