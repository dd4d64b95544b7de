// Property: on small random traces, `size` agrees with a brute-force scan of
// every 256-byte step from the peak live bytes up, for bfc and best_fit.
//
// Both policies can be non-monotonic in the limit (the free tail grows with
// it and changes best-fit choices). On a trace where the scan shows that, a
// search cannot promise the smallest passing limit; there the property is
// that the answer passes, is not below the scan's minimum, and that the
// test saw few such traces (most must be checked for equality).
#include <random>

#include "fmt/format.h"
#include "sim/all_layers.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

std::string RandomTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  std::vector<int> live;
  int next = 1;
  for (int i = 0; i < 40; ++i) {
    if (!live.empty() && rng() % 100 < 45) {
      const size_t k = rng() % live.size();
      text += fmt::format("free {}\n", live[k]);
      live.erase(live.begin() + static_cast<long>(k));
    } else {
      text += fmt::format("alloc {} {}\n", next, 1 + rng() % 4000);
      live.push_back(next++);
    }
  }
  return text;
}

TEST(SizePropertyTest, AgreesWithABruteForceScanOnSmallRandomTraces) {
  for (const std::string policy : {"bfc", "best_fit"}) {
    int checked_equal = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      const testing::TestTrace t = testing::TraceFromText(RandomTrace(seed));
      const AllocatorConfig c = testing::Config(policy);
      const uint64_t base = t.peak_live_bytes().value();
      // The scan: every step up to 4x peak live (each trace fits far below).
      std::vector<bool> fits;
      for (uint64_t limit = base; limit <= 4 * base + 4096; limit += 256)
        fits.push_back(testing::Fits(t, c, limit));
      const auto first = std::find(fits.begin(), fits.end(), true);
      ASSERT_NE(first, fits.end()) << policy << " seed " << seed;
      const uint64_t brute = base + 256 * static_cast<uint64_t>(first - fits.begin());
      const bool monotonic = std::find(first, fits.end(), false) == fits.end();
      const SizeResult r = testing::Size(t, c);
      ASSERT_TRUE(r.found);
      if (monotonic) {
        EXPECT_EQ(r.min_bytes_limit.value(), brute) << policy << " seed " << seed;
        EXPECT_FALSE(r.non_monotonic.has_value()) << policy << " seed " << seed;
        ++checked_equal;
      } else {
        EXPECT_GE(r.min_bytes_limit.value(), brute) << policy << " seed " << seed;
        EXPECT_TRUE(testing::Fits(t, c, r.min_bytes_limit.value()));
      }
    }
    EXPECT_GE(checked_equal, 30) << policy;
  }
}

}  // namespace
}  // namespace hbmsim
