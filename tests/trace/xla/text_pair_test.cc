// The buffer-assignment + live-range text pair, on the hand-made fixtures of
// tests/data/xla (written from shared/reference/tpu-and-xla.md §2.4 and the
// printing code's format strings).
#include "trace/xla/text_pair.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/trace/xla/xla_test_util.h"

namespace hbmsim::trace::xla {
namespace {

using ::testing::ElementsAre;

// Worked by hand from the fixtures: allocations laid end to end at 0, 1024,
// 1536, 3584, 3600; mul.2 (3-4) and bitcast.4 (4-6) share offset 1024 of the
// temp allocation and overlap, so they are one buffer 3-6 with id 3;
// fusion.6{1} matches the old-style "fusion.6" range; called.7 has no range.
const std::vector<std::string> kSmallEvents = {
    "t0 alloc 0 1024 addr=0 tag=p0",
    "t1 alloc 1 512 addr=1024 tag=p1",
    "t2 alloc 2 1024 addr=1536 tag=add.1",
    "t3 alloc 3 1024 addr=2560 tag=mul.2",
    "t3 free 1",  // ends at 3 (inclusive): freed after everything that starts at 3
    "t3 free 2",
    "t4 alloc 4 1024 addr=1536 tag=neg.3",
    "t5 alloc 7 256 addr=3600 tag=fusion.6{1}",
    "t5 free 4",
    "t6 alloc 6 16 addr=3584 tag=tuple.5{}",
    "t6 free 0",
    "t6 free 3",
    "t6 free 6",
    "t6 free 7",
};

TEST(XlaTextPair, SiblingLiveRangeFileJoinsIntoTheHandWorkedEvents) {
  absl::StatusOr<XlaTrace> trace = ReadTextPairFiles(kXlaData + "small-buffer-assignment.txt");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(EventLines(*trace), kSmallEvents);
  // p0 + p1 + add.1 + mul.2 at time 3, the peak the live-range file names.
  EXPECT_EQ(PeakLiveBytes(*trace), 3584u);
}

TEST(XlaTextPair, SkippedValuesAndUnusedRangesAreCountedInWarnings) {
  absl::StatusOr<XlaTrace> trace = ReadTextPairFiles(kXlaData + "small-buffer-assignment.txt");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const std::string ba = kXlaData + "small-buffer-assignment.txt";
  const std::string lr = kXlaData + "small-live-range.txt";
  EXPECT_THAT(
      trace->warnings,
      ElementsAre(ba + ": 1 of 9 assigned values have no live range in " + lr +
                      " and are not replayed (first: called.7 at line 11); the live ranges cover only the "
                      "flattened schedule, not the values of computations it does not list",
                  lr + ": 1 of 9 live ranges name no assigned value and are not replayed (first: "
                       "const.8{} at line 19); the buffer assignment gave them no memory"));
  const TraceMetadata& m = trace->metadata;
  EXPECT_EQ(*m.Find("xla_assigned_values"), "9");
  EXPECT_EQ(*m.Find("xla_replayed_intervals"), "7");
  EXPECT_EQ(*m.Find("xla_merged_values"), "1");
  EXPECT_EQ(*m.Find("xla_matched_without_shape_index"), "1");
  EXPECT_EQ(*m.Find("xla_max_time"), "6");
}

TEST(XlaTextPair, TheLiveRangeFileFindsItsBufferAssignment) {
  absl::StatusOr<XlaTrace> trace = ReadTextPairFiles(kXlaData + "small-live-range.txt");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->source, kXlaData + "small-buffer-assignment.txt");
  EXPECT_EQ(EventLines(*trace), kSmallEvents);
}

TEST(XlaTextPair, LiveRangesAppendedToTheBufferAssignmentGiveTheSameEvents) {
  absl::StatusOr<XlaTrace> trace = ReadTextPairFiles(kXlaData + "appended-buffer-assignment.txt");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(EventLines(*trace), kSmallEvents);
  // The unused range is named with its line in the combined file.
  ASSERT_EQ(trace->warnings.size(), 2u);
  EXPECT_THAT(trace->warnings[1],
              ::testing::HasSubstr("appended-buffer-assignment.txt: 1 of 9 live ranges "
                                   "name no assigned value and are not replayed (first: const.8{} "
                                   "at line 42)"));
}

TEST(XlaTextPair, FreesAtATimeComeAfterItsAllocsAndBeforeTheNextTimesAllocs) {
  // a: 0-0, b: 0-1, c: 1-1. Inclusive ends: a and b are live together at 0,
  // b and c at 1; a is freed before c is allocated.
  const std::string ba =
      "BufferAssignment:\n"
      "allocation 0: size 300, preallocated-temp:\n"
      " value: <1 a @0> (size=100,offset=0): f32[25]{0}\n"
      " value: <2 b @0> (size=100,offset=100): f32[25]{0}\n"
      " value: <3 c @0> (size=100,offset=0): f32[25]{0}\n";
  const std::string lr = "HloLiveRange (max 1):\n  BufferLiveRange:\n    c{}:1-1\n    b{}:0-1\n    a{}:0-0\n";
  absl::StatusOr<XlaTrace> trace = ParseTextPair(ba, "m-buffer-assignment.txt", lr, "m-live-range.txt");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_THAT(EventLines(*trace),
              ElementsAre("t0 alloc 1 100 addr=0 tag=a", "t0 alloc 2 100 addr=100 tag=b", "t0 free 1",
                          "t1 alloc 3 100 addr=0 tag=c", "t1 free 2", "t1 free 3"));
  EXPECT_EQ(PeakLiveBytes(*trace), 200u);
  EXPECT_TRUE(trace->warnings.empty());
}

}  // namespace
}  // namespace hbmsim::trace::xla
