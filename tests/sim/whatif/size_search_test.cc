// `size` on traces whose answers were worked out by hand.
#include "sim/all_layers.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

using testing::Config;
using testing::Size;
using testing::TraceFromText;

TEST(SizeSearchTest, IdealNeedsExactlyThePeakLiveBytes) {
  // Live bytes: 1000, 1777, 777 (free 1), 1677 (alloc 900 + 777): peak 1777,
  // not a multiple of 256, and ideal needs exactly that.
  const testing::TestTrace t = TraceFromText("alloc 1 1000\nalloc 2 777\nfree 1\nalloc 3 900\n");
  EXPECT_EQ(t.peak_live_bytes().value(), 1777u);
  const SizeResult r = Size(t, Config("ideal"));
  EXPECT_EQ(r.min_bytes_limit.value(), 1777u);
  EXPECT_EQ(r.overhead, 0.0);
  EXPECT_FALSE(r.non_monotonic);
}

// 2K | 1K | 1K | 1K, free the 2K and the third: holes of 2K at 0 and 1K at
// 3K. Then 1K and 2K. first_fit puts the 1K into the 2K hole and the 2K past
// the end: 7K. best_fit puts the 1K into the 1K hole and the 2K into the 2K
// hole: 5K, which is also the peak live.
constexpr char kTwoHoles[] =
    "alloc 1 2048\nalloc 2 1024\nalloc 3 1024\nalloc 4 1024\nfree 1\nfree 3\nalloc 5 1024\nalloc 6 2048\n";

// Each verdict the search counts reaches on_progress, with the bounds it
// knows then. first_fit on the two holes (grid 5120 + 256k, one job): the
// bracket's first round fails at 5120, 5376, 5632 and 6400; its second fits
// at 7680 and above; the narrowing fails at 6912 and fits at 7168; the
// window above it fits.
TEST(SizeSearchTest, ProgressReportsEveryVerdictWithTheBoundsSoFar) {
  const testing::TestTrace t = TraceFromText(kTwoHoles);
  std::vector<std::string> seen;
  SizeOptions options{256, 1};
  options.on_progress = [&seen](const SizeProgress& p) {
    seen.push_back(fmt::format("{} {} {}", p.limits_tried, p.smallest_fit ? p.smallest_fit->value() : 0,
                               p.largest_fail ? p.largest_fail->value() : 0));
  };
  absl::StatusOr<SizeResult> r = FindMinLimit(testing::Target(t, Config("first_fit")), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->min_bytes_limit, Bytes(7168));
  EXPECT_EQ(seen, (std::vector<std::string>{"1 0 5120", "2 0 5376", "3 0 5632", "4 0 6400", "5 7680 6400",
                                            "6 7680 6400", "7 7680 6400", "8 7680 6400", "9 7680 6912",
                                            "10 7168 6912", "11 7168 6912", "12 7168 6912", "13 7168 6912"}));
}

TEST(SizeSearchTest, FirstFitAndBestFitNeedDifferentLimits) {
  const testing::TestTrace t = TraceFromText(kTwoHoles);
  EXPECT_EQ(t.peak_live_bytes().value(), 5120u);
  EXPECT_EQ(Size(t, Config("first_fit")).min_bytes_limit.value(), 7168u);
  EXPECT_EQ(Size(t, Config("best_fit")).min_bytes_limit.value(), 5120u);
  const SizeResult ff = Size(t, Config("first_fit"));
  EXPECT_DOUBLE_EQ(ff.overhead, 0.4);
}

// a = 1M, b = 1M, free a, c = 2M: online, c finds only a 1M hole below b and
// goes on top (4M). Offline knows c is coming: c at 0, b at 2M, a under b at
// 0 (a dies before c is born): 3M, the peak live. Every online policy here
// needs 4M (paged: three 2 MiB pages would be 6M, but b and a share none and
// c takes one page: b's page + c's page = 4M).
constexpr char kFuture[] = "alloc 1 1048576\nalloc 2 1048576\nfree 1\nalloc 3 2097152\n";

TEST(SizeSearchTest, OfflineBeatsEveryOnlinePolicyByOneMiB) {
  const testing::TestTrace t = TraceFromText(kFuture);
  EXPECT_EQ(Size(t, Config("offline")).min_bytes_limit.value(), 3u << 20);
  for (const char* online : {"bfc", "first_fit", "best_fit", "paged"}) {
    EXPECT_EQ(Size(t, Config(online)).min_bytes_limit.value(), 4u << 20) << online;
  }
  EXPECT_EQ(Size(t, Config("ideal")).min_bytes_limit.value(), 3u << 20);
}

// bfc is not monotonic in its limit. Sizes are multiples of 256, so BFC's
// rounding is a no-op; it splits a chunk only when it is at least twice the
// request. Ids 1, 2, 3 take [0,256) [256,2304) [2304,3328); free 2 leaves a
// 2048 hole at 256 and the tail T = limit - 3328.
//   limit 4608 (T = 1280): id 4 (1536) best-fits the hole (the tail is too
//     small), unsplit; id 5 (1280) takes the tail exactly; free 4 reopens the
//     hole and id 6 (2048) fits in it.
//   limit 4864 (T = 1536): id 4 best-fits the tail now (1536 < 2048); id 5
//     takes the whole hole (2048 < 2*1280, no split); after free 4 only the
//     1536 tail is free, and id 6 (2048) fails. 5120 (T = 1792) fails alike.
//   limit 5376 (T = 2048): hole and tail tie; the lower address wins, as at 4608.
// The peak live is 4608, so the search's first round probes 4608 (fits) and
// 4864 (fails): the answer is 4608 with the warning naming 4864.
constexpr char kBfcNonMonotonic[] =
    "alloc 1 256\nalloc 2 2048\nalloc 3 1024\nfree 2\nalloc 4 1536\nalloc 5 1280\nfree 4\nalloc 6 2048\n";

TEST(SizeSearchTest, BfcIsNotMonotonicAndTheSearchSaysSo) {
  const testing::TestTrace t = TraceFromText(kBfcNonMonotonic);
  const AllocatorConfig bfc = Config("bfc");
  EXPECT_TRUE(testing::Fits(t, bfc, 4608));
  EXPECT_FALSE(testing::Fits(t, bfc, 4864));
  EXPECT_FALSE(testing::Fits(t, bfc, 5120));
  EXPECT_TRUE(testing::Fits(t, bfc, 5376));
  const SizeResult r = Size(t, bfc);
  EXPECT_EQ(r.min_bytes_limit.value(), 4608u);
  ASSERT_TRUE(r.non_monotonic.has_value());
  EXPECT_EQ(r.non_monotonic->value(), 4864u);
}

TEST(SizeSearchTest, ResultsDoNotDependOnJobs) {
  const testing::TestTrace t = TraceFromText(kTwoHoles);
  for (const char* p : {"bfc", "first_fit", "offline"}) {
    const SizeResult one = Size(t, Config(p), 256, 1);
    const SizeResult four = Size(t, Config(p), 256, 4);
    EXPECT_EQ(one.min_bytes_limit, four.min_bytes_limit) << p;
    ASSERT_EQ(one.probes.size(), four.probes.size()) << p;
    for (size_t i = 0; i < one.probes.size(); ++i) EXPECT_EQ(one.probes[i].limit, four.probes[i].limit);
  }
}

TEST(SizeSearchTest, AnImpossibleRequestIsNotFound) {
  const testing::TestTrace t = TraceFromText("alloc 1 18446744073709551615\n");
  const SizeResult r = Size(t, Config("bfc"));
  EXPECT_FALSE(r.found);
}

}  // namespace
}  // namespace hbmsim
