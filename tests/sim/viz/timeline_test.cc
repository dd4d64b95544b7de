// The timeline keeps O(columns) memory and never loses a peak to downsampling.
#include "sim/viz/timeline.h"

#include "gtest/gtest.h"

namespace hbmsim::sim::viz {
namespace {

std::array<int64_t, kSeriesCount> Values(int64_t v) { return {v, v * 2, v * 3, v * 4}; }

TEST(Timeline, ShortTraceHasOneColumnPerEvent) {
  Timeline t;
  for (uint64_t i = 0; i < 5; ++i) t.Sample(i, Values(static_cast<int64_t>(i)));
  ASSERT_EQ(t.columns().size(), 5u);
  EXPECT_EQ(t.events_per_column(), 1u);
  EXPECT_EQ(t.columns()[3].min[kBytesInUse], 6);
  EXPECT_EQ(t.columns()[3].max[kBytesInUse], 6);
  EXPECT_EQ(t.Max(kLargestFree), 16);
}

TEST(Timeline, LongTraceStaysWithinColumnsAndKeepsTheSpike) {
  Timeline t;
  const uint64_t n = 1'000'000;
  for (uint64_t i = 0; i < n; ++i) t.Sample(i, Values(i == 777'777 ? 1000 : static_cast<int64_t>(i % 7)));
  EXPECT_LE(t.columns().size(), Timeline::kMaxColumns);
  EXPECT_EQ(t.events_per_column(), 1024u);  // 2^10: the first width with 1e6 / w < 1200
  EXPECT_EQ(t.columns().size(), 977u);      // ceil(1e6 / 1024)
  const Column& spike = t.columns()[777'777 / 1024];
  EXPECT_EQ(spike.max[kLiveRequested], 1000);
  EXPECT_EQ(spike.min[kLiveRequested], 0);
  EXPECT_EQ(t.columns()[0].max[kLiveRequested], 6);
  EXPECT_EQ(t.Max(kBytesInUse), 2000);
  EXPECT_EQ(t.events(), n);
}

TEST(Timeline, MarkersSurviveMerging) {
  Timeline t;
  t.Mark(3, kFailureMarker);
  t.Mark(2, kDefragMarker);
  for (uint64_t i = 0; i < 5000; ++i) t.Sample(i, Values(1));
  t.Mark(4999, kFailureMarker);
  EXPECT_EQ(t.events_per_column(), 8u);
  EXPECT_EQ(t.columns()[0].markers[kFailureMarker], 1u);
  EXPECT_EQ(t.columns()[0].markers[kDefragMarker], 1u);
  EXPECT_EQ(t.columns()[4999 / 8].markers[kFailureMarker], 1u);
  EXPECT_EQ(t.columns()[1].markers[kFailureMarker], 0u);
}

TEST(Timeline, ColumnsWithoutSamplesStayUnsampled) {
  Timeline t;
  t.Sample(0, Values(1));
  t.Sample(10, Values(2));
  ASSERT_EQ(t.columns().size(), 11u);
  EXPECT_FALSE(t.columns()[5].sampled);
  EXPECT_TRUE(t.columns()[10].sampled);
}

}  // namespace
}  // namespace hbmsim::sim::viz
