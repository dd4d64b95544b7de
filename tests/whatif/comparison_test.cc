// compare's measures at a limit, worked out by hand on the two-holes trace:
// 2K | 1K | 1K | 1K, free the 2K and the third, then 1K and 2K.
#include "sim/whatif/comparison.h"

#include "tests/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

constexpr char kTwoHoles[] =
    "alloc 1 2048\nalloc 2 1024\nalloc 3 1024\nalloc 4 1024\nfree 1\nfree 3\nalloc 5 1024\nalloc 6 2048\n";

// Progress names each configuration as it starts and each of its verdicts:
// first_fit tries 13 limits on the two holes; best_fit fits at the peak live
// (5120): the bracket's first 4 (5120, 5376, 5632, 6400) and 5888, the one
// of the 3 above the answer not tried yet.
TEST(ComparisonTest, ProgressNamesEachConfigurationAndItsVerdicts) {
  const testing::TestTrace t = testing::TraceFromText(kTwoHoles);
  std::vector<std::string> seen;
  SizeOptions options{256, 1};
  options.on_progress = [&seen](const SizeProgress& p) {
    seen.push_back(fmt::format("{}/{} {} {}", p.config, p.configs, p.config_label, p.limits_tried));
  };
  const std::vector<AllocatorConfig> configs = {testing::Config("first_fit"), testing::Config("best_fit")};
  ASSERT_TRUE(CompareAllocators(*t.scenario, t.survey, configs, std::nullopt, options).ok());
  std::vector<std::string> want;
  for (size_t n = 0; n <= 13; ++n) want.push_back(fmt::format("0/2 first_fit {}", n));
  for (size_t n = 0; n <= 5; ++n) want.push_back(fmt::format("1/2 best_fit {}", n));
  EXPECT_EQ(seen, want);
}

TEST(ComparisonTest, FirstFitAt6KFailsOnFragmentationWithEveryMeasureExact) {
  const testing::TestTrace t = testing::TraceFromText(kTwoHoles);
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareAllocators(*t.scenario, t.survey, {testing::Config("first_fit"), testing::Config("best_fit")},
                        Bytes(6144), SizeOptions{});
  ASSERT_TRUE(rows.ok());
  const CompareRow& ff = (*rows)[0];
  EXPECT_EQ(ff.size.min_bytes_limit.value(), 7168u);
  ASSERT_TRUE(ff.at_limit.has_value());
  const AtLimit& m = *ff.at_limit;
  // Id 5 takes [0,1K); id 6 (2K) finds 1K at 1K, 1K at 3K and the 1K tail.
  EXPECT_EQ(m.failures, 1u);
  EXPECT_EQ(m.fragmentation, 1u);
  EXPECT_DOUBLE_EQ(*m.frag_at_first_failure, 2.0 / 3.0);
  // Peak in use is first reached by id 4 (5K); the 1K tail is all that is free.
  EXPECT_EQ(m.peak_bytes_in_use, 5120);
  EXPECT_DOUBLE_EQ(*m.frag_at_peak, 0.0);
  EXPECT_EQ(*m.peak_pool_bytes, 6144);
  EXPECT_DOUBLE_EQ(*m.utilization, 5120.0 / 6144.0);
  EXPECT_DOUBLE_EQ(*m.jw_at_peak_live, 0.2);  // pool 6K over 5K live
  const AtLimit& bf = *(*rows)[1].at_limit;
  EXPECT_EQ(bf.failures, 0u);
  EXPECT_FALSE(bf.frag_at_first_failure.has_value());
  const nlohmann::ordered_json j = CompareJson(*t.scenario, t.survey, Bytes(6144), *rows);
  EXPECT_EQ(j["rows"][0]["heap_minus_lower_bound"], 2048);
  EXPECT_EQ(j["rows"][1]["at_limit"]["fragmentation_at_first_failure"], nullptr);
}

}  // namespace
}  // namespace hbmsim
