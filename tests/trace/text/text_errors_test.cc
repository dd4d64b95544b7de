// One test per error class of the text format, each on its own malformed
// fixture in tests/data/traces/malformed/, asserting the whole message.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/trace/text/trace_test_util.h"

namespace hbmsim {
namespace {

std::string MalformedPath(const std::string& fixture) {
  return testing::TraceFixture("malformed/" + fixture);
}

// The first error reading `fixture`, or "no error".
std::string ErrorOf(const std::string& fixture) {
  std::string path;
  return testing::FirstErrorOfFixture("malformed/" + fixture, path);
}

// What the error must read: the fixture's path, then ":<line>: <message>".
std::string At(const std::string& fixture, const std::string& line_and_message) {
  return MalformedPath(fixture) + ":" + line_and_message;
}

TEST(TextErrorsTest, UnknownEvent) {
  EXPECT_EQ(ErrorOf("unknown_event.trace"),
            At("unknown_event.trace",
               "3: unknown event 'allocate' (expected alloc, free, free_requested, free_completed, "
               "program_load, program_run, program_unload or mark)"));
}

TEST(TextErrorsTest, MissingField) {
  EXPECT_EQ(ErrorOf("missing_field.trace"),
            At("missing_field.trace", "2: missing <bytes> in 'alloc <id> <bytes> [attrs]'"));
}

TEST(TextErrorsTest, NonNumericField) {
  EXPECT_EQ(ErrorOf("non_numeric.trace"),
            At("non_numeric.trace", "3: bad <id>: 'one' is not a decimal number"));
}

TEST(TextErrorsTest, SizeDoesNotFitIn64Bits) {
  EXPECT_EQ(ErrorOf("size_too_big.trace"),
            At("size_too_big.trace", "3: bad <bytes>: '18446744073709551616' does not fit in 64 bits"));
}

TEST(TextErrorsTest, NegativeNumber) {
  EXPECT_EQ(ErrorOf("negative_size.trace"),
            At("negative_size.trace", "2: bad <bytes>: negative size '-4096'"));
}

TEST(TextErrorsTest, FreeOfIdThatIsNotLive) {
  EXPECT_EQ(ErrorOf("free_not_live.trace"), At("free_not_live.trace", "4: free of id 1 that is not live"));
}

TEST(TextErrorsTest, AllocOfIdThatIsStillLive) {
  EXPECT_EQ(ErrorOf("alloc_still_live.trace"),
            At("alloc_still_live.trace", "4: alloc of id 7 that is still live"));
}

TEST(TextErrorsTest, ProgramRunOfUnknownProgram) {
  EXPECT_EQ(
      ErrorOf("program_run_unknown.trace"),
      At("program_run_unknown.trace", "3: program_run of unknown program 2 (never loaded, or unloaded)"));
}

TEST(TextErrorsTest, ProgramLoadedTwice) {
  EXPECT_EQ(ErrorOf("program_load_twice.trace"),
            At("program_load_twice.trace", "3: program_load of program 1 that is already loaded"));
}

TEST(TextErrorsTest, FreeCompletedWithoutRequest) {
  EXPECT_EQ(ErrorOf("free_completed_without_request.trace"),
            At("free_completed_without_request.trace",
               "3: free_completed of id 1 without a pending free_requested"));
}

TEST(TextErrorsTest, TooManyFields) {
  EXPECT_EQ(ErrorOf("too_many_fields.trace"),
            At("too_many_fields.trace", "3: unexpected extra field '100' in 'free <id> [attrs]'"));
}

TEST(TextErrorsTest, BadAttribute) {
  EXPECT_EQ(
      ErrorOf("bad_attribute.trace"),
      At("bad_attribute.trace", "3: attribute tag= is not allowed on free (only on alloc and program_load)"));
}

TEST(TextErrorsTest, TimeGoesBackwards) {
  EXPECT_EQ(ErrorOf("time_backwards.trace"),
            At("time_backwards.trace",
               "3: t=40 is earlier than t=50 of a previous event (time stamps must be non-decreasing)"));
}

TEST(TextErrorsTest, UnsupportedVersion) {
  EXPECT_EQ(ErrorOf("unsupported_version.trace"),
            At("unsupported_version.trace",
               "1: unsupported trace format version 'v2' (this reader reads '# hbmsim-trace v1')"));
}

TEST(TextErrorsTest, NulByte) {
  EXPECT_EQ(ErrorOf("nul_byte.trace"), At("nul_byte.trace", "3: NUL byte in line (is this a binary file?)"));
}

TEST(TextErrorsTest, InvalidUtf8InTag) {
  EXPECT_EQ(ErrorOf("invalid_utf8.trace"), At("invalid_utf8.trace", "2: tag= is not valid UTF-8"));
}

TEST(TextErrorsTest, MarkWithoutLabel) {
  EXPECT_EQ(ErrorOf("mark_without_label.trace"),
            At("mark_without_label.trace", "2: missing <label> in 'mark <label> [attrs]'"));
}

// Too big for a checked-in fixture: a file whose line 2 has no end.
TEST(TextErrorsTest, LineLongerThanCap) {
  const std::string path = ::testing::TempDir() + "/long_line.trace";
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("alloc 1 8\n", f);
    const std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 48; ++i) std::fwrite(chunk.data(), 1, chunk.size(), f);  // 3 MiB, no newline
    std::fclose(f);
  }
  absl::StatusOr<std::unique_ptr<TextTraceReader>> reader = TextTraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  absl::StatusOr<std::vector<OwnedEvent>> events = testing::ReadAll(**reader);
  EXPECT_EQ(events.status().message(), path + ":2: line longer than 1048576 bytes");
  EXPECT_LT((*reader)->bytes_read(), 3u << 20);  // it stopped before the end of the line
  std::remove(path.c_str());
}

// Every file in malformed/ has its test above and fails: a fixture added
// without a test, or one that stopped failing, shows up here.
TEST(TextErrorsTest, EveryMalformedFixtureIsCoveredAndFails) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(testing::TraceFixture("malformed"))) {
    names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  const std::vector<std::string> tested = {
      "alloc_still_live", "bad_attribute",      "free_completed_without_request",
      "free_not_live",    "invalid_utf8",       "mark_without_label",
      "missing_field",    "negative_size",      "non_numeric",
      "nul_byte",         "program_load_twice", "program_run_unknown",
      "size_too_big",     "time_backwards",     "too_many_fields",
      "unknown_event",    "unsupported_version"};
  EXPECT_EQ(names, tested);
  for (const std::string& name : names) {
    EXPECT_NE(ErrorOf(name + ".trace"), "no error") << name;
  }
}

}  // namespace
}  // namespace hbmsim
