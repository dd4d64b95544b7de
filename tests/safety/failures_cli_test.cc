// Issue 18, item 5 in the default suite: the recorder keeps the first 64
// failures (what the reports list) and counts the rest, while --json still
// lists every failure, streamed through a scratch file in the same bytes
// dump(2) would print. The 2 M-failure RSS bound is failures_rss_slow_test.cc.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

constexpr int kFailures = 300;

std::string FailingTrace() {
  std::string t = "# hbmsim-trace v1\nalloc 1 1024 tag=w\n";
  for (int i = 2; i <= kFailures + 1; ++i) {
    t += fmt::format("alloc {} 4096 tag=t{}{}\n", i, i, i == 100 ? " shape=f32[2,3]" : "");
    if (i == 150) t += "mark step=2\n";
  }
  return t;
}

TEST(BoundedFailures, TheJsonListsEveryFailureTheTextCountsThem) {
  const std::string dir = TestDir();
  Spit(dir + "/t.trace", FailingTrace());
  const Result r = Hbmsim(dir, "replay t.trace --allocator best_fit --bytes-limit 2KiB --json r.json --html r.html");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(fmt::format("\nFailed allocations ({}):\n", kFailures)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("  ... and {} more (see --json)\n", kFailures - 50)), std::string::npos);
  EXPECT_NE(Slurp(dir + "/r.html").find(fmt::format("… and {} more failures (see --json).", kFailures - 50)),
            std::string::npos);
  const std::string text = Slurp(dir + "/r.json");
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  ASSERT_EQ(j["failures"].size(), static_cast<size_t>(kFailures));
  EXPECT_EQ(j["failures"][0]["event"], 1);
  EXPECT_EQ(j["failures"][0]["tag"], "t2");
  EXPECT_EQ(j["failures"][98]["shape"], "f32[2,3]");
  EXPECT_FALSE(j["failures"][148].contains("after_mark"));  // id 150, the alloc before the mark
  EXPECT_EQ(j["failures"][149]["after_mark"], "step=2");
  EXPECT_EQ(j["failures"][kFailures - 1]["id"], kFailures + 1);
  EXPECT_EQ(j["summary"]["failures"], kFailures);
  // The streamed array is byte for byte what dump(2) of the whole object prints.
  EXPECT_EQ(text, j.dump(2) + "\n");
}

TEST(BoundedFailures, NoFailureWritesAnEmptyArray) {
  const std::string dir = TestDir();
  Spit(dir + "/t.trace", "alloc 1 1024\nfree 1\n");
  const Result r = Hbmsim(dir, "replay t.trace --allocator best_fit --bytes-limit 2KiB --json r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = Slurp(dir + "/r.json");
  EXPECT_NE(text.find("\n  \"failures\": [],\n"), std::string::npos);
  EXPECT_EQ(text, nlohmann::ordered_json::parse(text).dump(2) + "\n");
}

}  // namespace
}  // namespace hbmsim::testing
