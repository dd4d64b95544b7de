// The rematerialization warning: three exact numbers from any log line.
#include "trace/xla/remat_warning.h"

#include "gtest/gtest.h"

namespace hbmsim::trace::xla {
namespace {

constexpr std::string_view kLog =
    "2024-05-01 10:00:00.000000: I external/xla/xla/service/gpu/gpu_compiler.cc:1234] compiling\n"
    "2024-05-01 10:00:01.000000: W external/xla/xla/service/hlo_rematerialization.cc:3005] Can't reduce "
    "memory use "
    "below 16.00GiB (17179869184 bytes) by rematerialization; only reduced to 19.00GiB (20401094656 bytes), "
    "down "
    "from 24.00GiB (25769803776 bytes) originally\r\n"
    "something else\n";

TEST(XlaRemat, TheThreeNumbersOfTheWarningLine) {
  absl::StatusOr<std::vector<RematWarning>> w = FindRematWarnings(kLog, "train.log");
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 1u);
  const RematWarning& r = (*w)[0];
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.limit, 17179869184u);
  EXPECT_EQ(r.after, 20401094656u);
  EXPECT_EQ(r.before, 25769803776u);
  EXPECT_EQ(r.limit_text, "16.00GiB");
  EXPECT_EQ(r.after_text, "19.00GiB");
  EXPECT_EQ(r.before_text, "24.00GiB");
  EXPECT_EQ(r.over_target(), 3221225472u);
  EXPECT_EQ(r.saved(), 5368709120u);
}

TEST(XlaRemat, RenderedReportGivesTheLowerBoundAndTheGap) {
  absl::StatusOr<std::vector<RematWarning>> w = FindRematWarnings(kLog, "train.log");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(
      RenderRematText(*w),
      "XLA rematerialization warning (line 2): the compiler could not fit the program under its limit\n"
      "  remat target (limit):     17179869184 (16.00GiB)\n"
      "  peak after remat:         20401094656 (19.00GiB)\n"
      "  peak before remat:        25769803776 (24.00GiB)\n"
      "  over the target:           3221225472 (3.00GiB)\n"
      "  saved by remat:            5368709120 (5.00GiB)\n"
      "  what-if: the program needs at least 20401094656 bytes (19.00GiB) of live buffers at its peak (XLA's "
      "no-fragmentation count), so no allocator fits it in less; a device limit must exceed that plus "
      "fragmentation, and the remat target must grow by at least 3221225472 bytes for the pass to succeed\n");
}

TEST(XlaRemat, NoWarningIsAnEmptyListAndAGarbledOneNamesItsLine) {
  absl::StatusOr<std::vector<RematWarning>> none = FindRematWarnings("nothing here\n", "a.log");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  absl::StatusOr<std::vector<RematWarning>> cut =
      FindRematWarnings("x\nCan't reduce memory use below 16.00GiB (17179869184 bytes) by remat", "a.log");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(
      cut.status().message(),
      "a.log:2: expected \"Can't reduce memory use below A (a bytes) by rematerialization; only reduced to B "
      "(b bytes), down from C (c bytes) originally\"");
  EXPECT_FALSE(
      FindRematWarnings("Can't reduce memory use below 1 (-5 bytes) by rematerialization; only reduced to "
                        "2 (2 bytes), down from 3 (3 bytes) originally",
                        "a.log")
          .ok());
}

}  // namespace
}  // namespace hbmsim::trace::xla
