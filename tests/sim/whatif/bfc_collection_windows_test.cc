// bfc with growth and garbage collection (TensorFlow's GPU allocator under
// allow_growth) under `size`'s shared trials (sim/whatif/checkpoints.h): a run
// keeps its limit window until a collection runs, its limit alone after
// (BfcAllocator::PinWindow), and resumed trials are fresh ones whether their
// limit collected or not.
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "allocator/bfc/bfc_allocator.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/whatif/checkpoints.h"
#include "tests/common/sanitized_build.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

using testing::ExpectResumedIsFresh;
using testing::ExpectSameSearch;

// Rounds of medium buffers, all freed (the growing regions they took then
// hold nothing), each followed by one huge buffer that outlives the round:
// where the limit refuses its Extend, garbage collection releases the free
// regions and the pool is cut again, at different rounds for different
// limits, and runs go on fitting after it. Returns the trace and, per event,
// (id, bytes) with bytes 0 for a free, to replay directly.
std::string CollectingTrace(uint64_t seed, std::vector<std::pair<uint64_t, uint64_t>>& ops) {
  std::mt19937_64 rng(seed);
  std::string text;
  uint64_t next = 1;
  auto alloc = [&](uint64_t bytes) {
    text += fmt::format("alloc {} {}\n", next, bytes);
    ops.emplace_back(next, bytes);
    return next++;
  };
  auto free = [&](uint64_t id) {
    text += fmt::format("free {}\n", id);
    ops.emplace_back(id, 0);
  };
  std::optional<uint64_t> huge;
  for (int round = 0; round < 400; ++round) {
    std::vector<uint64_t> medium;
    std::vector<uint64_t> kept;
    for (int i = 0; i < 10 + static_cast<int>(rng() % 40); ++i) medium.push_back(alloc((1 << 20) + rng() % (5 << 20)));
    for (int i = 0; i < static_cast<int>(rng() % 4); ++i) kept.push_back(alloc((64 << 10) + rng() % (1 << 20)));
    for (const uint64_t id : medium) free(id);
    if (huge) free(*huge);
    huge = alloc((100 << 20) + rng() % (150 << 20));
    for (const uint64_t id : kept) free(id);
  }
  return text;
}

int64_t CollectionsOf(const BfcAllocator& a) {
  Counters counters;
  a.AppendCounters(counters);
  for (const Counter& c : counters) {
    if (c.name == "garbage_collections") return c.value;
  }
  return -1;
}

// Replays `ops` (CollectingTrace's) on `a`, calling before(a) ahead of each alloc.
template <typename Before>
void ReplayOps(const std::vector<std::pair<uint64_t, uint64_t>>& ops, BfcAllocator& a, Before before) {
  std::map<uint64_t, Handle> live;
  for (const auto& [id, bytes] : ops) {
    if (bytes == 0) {
      if (auto it = live.find(id); it != live.end()) a.Free(it->second);
      continue;
    }
    before(a);
    AllocRequest r;
    r.id = BufferId(id);
    r.bytes = Bytes(bytes);
    const AllocResult res = a.Allocate(r);
    if (res.ok()) live[id] = res.handle;
  }
}

int64_t GarbageCollections(const std::vector<std::pair<uint64_t, uint64_t>>& ops, const BfcOptions& options) {
  BfcAllocator a(options);
  ReplayOps(ops, a, [](const BfcAllocator&) {});
  return CollectionsOf(a);
}

// A growing pool's run keeps a window until its first collection, and its
// limit alone from there: the collection released regions and the next Extend
// took what the limit left, which CloneAt does not lay out again.
TEST(SharedTrialsTest, BfcCollectionLeavesTheLimitAlone) {
  std::vector<std::pair<uint64_t, uint64_t>> ops;
  (void)CollectingTrace(1, ops);
  BfcOptions options;
  options.allow_growth = true;
  options.garbage_collection = true;
  // The largest limit (of a coarse sweep down from 1 GB) under which a collection runs.
  for (uint64_t l = 1'000'000'000; l > 100'000'000 && GarbageCollections(ops, options) == 0; l -= 10'000'000) {
    options.memory_limit = Bytes(l);
  }
  ASSERT_GT(GarbageCollections(ops, options), 0);
  BfcAllocator a(options);
  ASSERT_TRUE(a.TrackLimitWindow());
  bool wide_before = false;
  ReplayOps(ops, a, [&](const BfcAllocator& now) {
    if (CollectionsOf(now) == 0) wide_before |= now.limit_window().lo < now.limit_window().hi;
  });
  EXPECT_TRUE(wide_before);
  EXPECT_EQ(a.limit_window(), (LimitWindow{options.memory_limit, options.memory_limit}));
  EXPECT_EQ(a.TakeRecentWindow(), (LimitWindow{options.memory_limit, options.memory_limit}));
  EXPECT_FALSE(a.Fingerprint(UINT64_MAX).has_value());  // no meeting another limit's run from here
}

// TensorFlow's GPU allocator under allow_growth: runs keep their windows
// until a collection runs, their limit alone after. Trials resumed from
// checkpoints are fresh ones whether their limit collected or not.
TEST(SharedTrialsTest, GrowthWithCollectionsIsExactWhereCollectionsRun) {
  for (const bool coalescing : {false, true}) {
    std::vector<std::pair<uint64_t, uint64_t>> ops;
    const testing::TestTrace t = testing::TraceFromText(CollectingTrace(coalescing ? 2 : 1, ops));
    std::vector<std::string> sets = {"allow_growth=true", "garbage_collection=true"};
    if (coalescing) sets.push_back("region_coalescing=true");
    const AllocatorConfig config = testing::Config("bfc", sets);
    const TrialTarget target = testing::Target(t, config);
    std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
    ASSERT_NE(shared, nullptr);
    ASSERT_TRUE(shared->resumes());
    const uint64_t peak = t.peak_live_bytes().value();
    int collected = 0;
    // Coarse steps, each with near neighbours (whose runs share windows longest).
    std::vector<uint64_t> limits;
    // About 60 steps, 20 under the sanitizers (tests/common/sanitized_build.h).
    const uint64_t coarser = testing::ForThisBuild<uint64_t>(1, 3);
    for (uint64_t l = 2 * peak; l >= peak - peak / 8; l -= coarser * (peak / 53 + 4096)) {
      for (const uint64_t d : {0, 256, 4096, 65536, 1 << 20}) limits.push_back(l + d);
    }
    for (const uint64_t l : limits) {
      BfcOptions options;
      options.memory_limit = Bytes(l);
      options.allow_growth = true;
      options.garbage_collection = true;
      options.region_coalescing = coalescing;
      collected += GarbageCollections(ops, options) > 0 ? 1 : 0;
      ExpectResumedIsFresh(target, *shared, Bytes(l), fmt::format("coalescing {}", coalescing));
    }
    // Worth something only if some limits collected and trials resumed. With
    // region coalescing every Extend grows the one region in place, which is
    // never free while anything is held: nothing to collect, windows all along.
    if (coalescing) {
      EXPECT_EQ(collected, 0);
    } else {
      EXPECT_GE(collected, 5);
    }
    EXPECT_GT(shared->resumed(), 10u) << coalescing;
    absl::StatusOr<SizedScenario> sized = SizeScenario(*t.scenario, config, SizeOptions{256, 2, true});
    absl::StatusOr<SizeResult> without = FindMinLimit(target, SizeOptions{256, 2, false});
    ASSERT_TRUE(sized.ok() && without.ok());
    EXPECT_TRUE(sized->result.trials_resume);
    ExpectSameSearch(sized->result, *without, fmt::format("size, coalescing {}", coalescing));
  }
}

}  // namespace
}  // namespace hbmsim
