// Slow: headless Chromium renders the HTML report of the fragmentation
// example and the screenshot must not be blank (browser_test.sh counts its
// distinct colours). Skipped, saying why, when chromium cannot be installed.
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace hbmsim::testing {
namespace {

TEST(Browser, ChromiumRendersTheHtmlReport) {
  const std::string png = ::testing::TempDir() + "/hbmsim_browser_report.png";
  const std::string cmd = std::string("sh ") + HBMSIM_SOURCE_DIR + "/tests/viz/browser_test.sh " +
                          HBMSIM_BINARY + " " + HBMSIM_SOURCE_DIR + " " + png;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "chromium is not installed and could not be installed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the screenshot is blank or chromium failed: " << cmd;
}

}  // namespace
}  // namespace hbmsim::testing
