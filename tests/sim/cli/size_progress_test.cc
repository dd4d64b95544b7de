// `hbmsim size`'s progress line (sim/cli/size_progress.h): what it draws and
// when, on a clock the test moves.
#include "sim/cli/size_progress.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace hbmsim::sim::cli {
namespace {

using Clock = SizeProgressLine::Clock;

// A FILE* whose bytes the test reads back.
class Captured {
 public:
  Captured() : file_(open_memstream(&data_, &size_)) {}
  ~Captured() {
    std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

SizeProgress Bounds(size_t tried, uint64_t fit, uint64_t fail) {
  SizeProgress p;
  p.limits_tried = tried;
  if (fit) p.smallest_fit = Bytes(fit);
  if (fail) p.largest_fail = Bytes(fail);
  return p;
}

TEST(SizeProgressLineTest, SaysTheBoundsKnownSoFar) {
  EXPECT_EQ(SizeProgressLine::Text("hbmsim size", Bounds(1, 0, 0)), "hbmsim size: 1 limit tried");
  EXPECT_EQ(SizeProgressLine::Text("hbmsim size", Bounds(4, 0, 6400)),
            "hbmsim size: 4 limits tried; fails at 6400 B");
  EXPECT_EQ(SizeProgressLine::Text("hbmsim size", Bounds(5, 7680, 0)),
            "hbmsim size: 5 limits tried; fits at 7680 B");
  EXPECT_EQ(SizeProgressLine::Text("hbmsim size", Bounds(9, 7680, 6912)),
            "hbmsim size: 9 limits tried; fits at 7680 B, fails at 6912 B");
  SizeProgress second = Bounds(0, 0, 0);
  second.config = 1;
  second.configs = 4;
  second.config_label = "bfc:allow_growth=true";
  EXPECT_EQ(SizeProgressLine::Text("hbmsim replay: what would fit", second),
            "hbmsim replay: what would fit, 2 of 4 (bfc:allow_growth=true): 0 limits tried");
}

// Nothing in the first second, then at most one redraw per half second, and
// the line is erased at the end.
TEST(SizeProgressLineTest, DrawsAfterASecondAtMostTwiceASecondAndClears) {
  Captured out;
  Clock::time_point now{};
  {
    SizeProgressLine line(out.file(), true, "hbmsim size", [&now] { return now; });
    EXPECT_NE(line.survey_observer(), nullptr);
    now += std::chrono::milliseconds(900);
    line.OnSearch(Bounds(1, 0, 5120));
    EXPECT_EQ(out.text(), "");
    now += std::chrono::milliseconds(200);  // 1.1 s
    line.OnSearch(Bounds(2, 0, 5376));
    EXPECT_EQ(out.text(), "\rhbmsim size: 2 limits tried; fails at 5376 B\x1b[K");
    now += std::chrono::milliseconds(300);  // 1.4 s: too soon
    line.OnSearch(Bounds(3, 0, 5632));
    now += std::chrono::milliseconds(300);  // 1.7 s
    line.OnSearch(Bounds(4, 7680, 6400));
    EXPECT_EQ(out.text(),
              "\rhbmsim size: 2 limits tried; fails at 5376 B\x1b[K"
              "\rhbmsim size: 4 limits tried; fits at 7680 B, fails at 6400 B\x1b[K");
  }
  EXPECT_EQ(out.text(),
            "\rhbmsim size: 2 limits tried; fails at 5376 B\x1b[K"
            "\rhbmsim size: 4 limits tried; fits at 7680 B, fails at 6400 B\x1b[K\r\x1b[K");
}

TEST(SizeProgressLineTest, DisabledDrawsNothing) {
  Captured out;
  Clock::time_point now{};
  {
    SizeProgressLine line(out.file(), false, "hbmsim size", [&now] { return now; });
    EXPECT_EQ(line.survey_observer(), nullptr);
    now += std::chrono::seconds(5);
    line.OnSearch(Bounds(2, 0, 5376));
  }
  EXPECT_EQ(out.text(), "");
}

}  // namespace
}  // namespace hbmsim::sim::cli
