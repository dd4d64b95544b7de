// Issue 18, item 5: memory stays bounded whatever the outcome. Two million
// failed allocations with --json: the child's peak RSS (getrusage via wait4)
// stays under 256 MB, and the report still holds one object per failure
// (streamed through a scratch file, sim/report/failure_spill.h). Labelled
// slow: the report is about half a gigabyte.
#include <fstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/safety/child.h"

namespace hbmsim::testing {
namespace {

constexpr int kFailures = 2'000'000;

TEST(BoundedMemory, TwoMillionFailuresWithJsonStayUnder256MB) {
  const std::string dir = TestDir();
  {
    std::ofstream t(dir + "/t.trace", std::ios::binary);
    t << "# hbmsim-trace v1\n";
    std::string chunk;
    for (int i = 1; i <= kFailures; ++i) {
      chunk += fmt::format("alloc {} 4096\nfree {}\n", i, i);
      if (chunk.size() > (1 << 20)) {
        t << chunk;
        chunk.clear();
      }
    }
    t << chunk;
  }
  const Result r = Hbmsim(dir, "replay t.trace --allocator bfc --bytes-limit 1 --json r.json --placements p.csv");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(r.peak_rss_bytes, uint64_t{256} << 20);
  EXPECT_NE(r.out.find(fmt::format("Failed allocations ({}):", kFailures)), std::string::npos);
  // One object per failure, in order, and the report's closing keys after them.
  std::ifstream json(dir + "/r.json", std::ios::binary);
  std::string line;
  int events = 0;
  bool first_is_event_0 = false;
  std::string last;
  bool in_failures = false;  // other sections (memory.failed_request, ...) have an "event" too
  while (std::getline(json, line)) {
    if (line == "  \"failures\": [") in_failures = true;
    if (in_failures && line.starts_with("  ]")) in_failures = false;
    if (in_failures && line.starts_with("      \"event\": ")) {
      if (events == 0) first_is_event_0 = line == "      \"event\": 0,";
      ++events;
    }
    last = line;
  }
  EXPECT_EQ(events, kFailures);
  EXPECT_TRUE(first_is_event_0);
  EXPECT_EQ(last, "}");
}

}  // namespace
}  // namespace hbmsim::testing
