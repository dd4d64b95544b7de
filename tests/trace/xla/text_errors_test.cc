// Malformed buffer-assignment and live-range text: one InvalidArgument each,
// naming the file and the line.
#include <fstream>

#include "gtest/gtest.h"
#include "tests/trace/xla/xla_test_util.h"
#include "trace/xla/text_pair.h"

namespace hbmsim::trace::xla {
namespace {

constexpr std::string_view kGoodRanges = "HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:0-3\n";

std::string AssignmentError(const std::string& ba) {
  absl::StatusOr<XlaTrace> t = ParseTextPair(ba, "m-buffer-assignment.txt", kGoodRanges, "m-live-range.txt");
  return t.ok() ? "ok" : std::string(t.status().message());
}

std::string RangeError(const std::string& lr) {
  const std::string ba =
      "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8,offset=0): s32[2]{0}\n";
  absl::StatusOr<XlaTrace> t = ParseTextPair(ba, "m-buffer-assignment.txt", lr, "m-live-range.txt");
  return t.ok() ? "ok" : std::string(t.status().message());
}

TEST(XlaTextErrors, BufferAssignmentLinesNameTheirLine) {
  EXPECT_EQ(AssignmentError(
                "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8,offset=0): s32[2]\n"),
            "ok");
  EXPECT_EQ(AssignmentError("HloModule m\n"),
            "m-buffer-assignment.txt:1: expected \"BufferAssignment:\" as the first line");
  EXPECT_EQ(AssignmentError("BufferAssignment:\nallocation x: size 8:\n"),
            "m-buffer-assignment.txt:2: expected \"allocation <index>: size <bytes>[, <flags>]:\", got "
            "\"allocation x: size 8:\"");
  EXPECT_EQ(AssignmentError(
                "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8 offset=0): s32[2]\n"),
            "m-buffer-assignment.txt:3: expected \"value: <id name[ @color]> (size=<bytes>,offset=<bytes>): "
            "<shape>\", got \"value: <0 a @0> (size=8 offset=0): s32[2]\"");
  EXPECT_EQ(AssignmentError("BufferAssignment:\n value: <0 a @0> (size=8,offset=0): s32[2]\n"),
            "m-buffer-assignment.txt:2: a value line before any allocation");
  EXPECT_EQ(AssignmentError(
                "BufferAssignment:\nallocation 0: size 8:\n value: <0 a @0> (size=8,offset=4): s32[2]\n"),
            "m-buffer-assignment.txt:3: a at offset 4 with size 8 does not fit allocation 0 of size 8");
  EXPECT_EQ(AssignmentError("BufferAssignment:\nallocation 0: size 8:\nallocation 0: size 8:\n"),
            "m-buffer-assignment.txt:3: allocation 0 listed twice (first at line 2)");
  EXPECT_EQ(
      AssignmentError("BufferAssignment:\nallocation 0: size 16:\n value: <0 a @0> (size=8,offset=0): s\n"
                      " value: <0 b @0> (size=8,offset=8): s\n"),
      "m-buffer-assignment.txt:4: value 0 assigned twice (first at line 3)");
  EXPECT_EQ(AssignmentError("BufferAssignment:\nallocation 0: size 99999999999999999999:\n"),
            "m-buffer-assignment.txt:2: expected \"allocation <index>: size <bytes>[, <flags>]:\", got "
            "\"allocation 0: size 99999999999999999999:\"");
}

TEST(XlaTextErrors, LiveRangeLinesNameTheirLine) {
  EXPECT_EQ(RangeError(std::string(kGoodRanges)), "ok");
  EXPECT_EQ(RangeError(""), "m-live-range.txt:0: no \"HloLiveRange (max N):\" header");
  EXPECT_EQ(RangeError("HloLiveRange (max x):\n"),
            "m-live-range.txt:1: expected \"HloLiveRange (max N):\", got \"HloLiveRange (max x):\"");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  a{}:0-3\n"),
            "m-live-range.txt:2: expected a section title, got \"a{}:0-3\"");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:0_3\n"),
            "m-live-range.txt:3: expected <start>-<end> after \"a{}:\", got \"0_3\"");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:3-1\n"),
            "m-live-range.txt:3: a{} starts at 3 after its end 1");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:0-4\n"),
            "m-live-range.txt:3: a{} ends at 4, after the schedule's max 3");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  BufferLiveRange:\n    a{}:0-1\n    a{}:2-3\n"),
            "m-live-range.txt:4: a{} has a second live range (first at line 3)");
  EXPECT_EQ(RangeError("HloLiveRange (max 3):\n  BufferLiveRange:\n    :0-1\n"),
            "m-live-range.txt:3: expected <value>:<start>-<end>, got \":0-1\"");
}

TEST(XlaTextErrors, AMissingLiveRangeFileIsNamed) {
  const std::string lonely = ::testing::TempDir() + "/lonely-buffer-assignment.txt";
  { std::ofstream(lonely) << "BufferAssignment:\nallocation 0: size 8:\n"; }
  absl::StatusOr<XlaTrace> t = ReadTextPairFiles(lonely);
  ASSERT_FALSE(t.ok());
  const std::string sibling = ::testing::TempDir() + "/lonely-live-range.txt";
  EXPECT_EQ(t.status().message(),
            lonely +
                ": no live ranges: no appended \"HloLiveRange (max N):\" section and no "
                "readable " +
                sibling);
}

}  // namespace
}  // namespace hbmsim::trace::xla
