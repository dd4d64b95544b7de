// Reconvergence (sim/whatif/reconvergence.h): a track's windows ahead are the
// intersection of every later decision's; a trial meets a finished one only
// at the same event, in the same state, inside that window; BFC's
// fingerprint names the state up to the limit; and a verdict-only shared
// trial that stops where it meets ends as a fresh trial would.
#include <cmath>
#include <random>

#include "allocator/bfc/bfc_allocator.h"
#include "fmt/format.h"
#include "sim/all_layers.h"
#include "sim/whatif/checkpoints.h"
#include "sim/whatif/comparison.h"
#include "sim/whatif/reconvergence.h"
#include "tests/common/sanitized_build.h"
#include "tests/sim/whatif/whatif_test_util.h"

namespace hbmsim {
namespace {

LimitWindow W(uint64_t lo, uint64_t hi) { return LimitWindow{Bytes(lo), Bytes(hi)}; }

TEST(TrackRecorderTest, AheadIsEveryLaterDecisionsWindow) {
  TrackRecorder r;
  r.Mark(0, StateFingerprint{1, 1}, W(0, 5));  // before the first mark: no mark's future
  r.Mark(10, StateFingerprint{2, 2}, W(100, 900));
  r.Mark(20, StateFingerprint{3, 3}, W(200, 800));
  std::shared_ptr<const TrialTrack> t = r.Finish(W(150, 700), false);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->marks.size(), 3u);
  EXPECT_EQ(t->marks[0].event, 0u);
  EXPECT_EQ(t->marks[0].ahead, W(200, 700));  // (100,900) ∩ (200,800) ∩ (150,700)
  EXPECT_EQ(t->marks[1].ahead, W(200, 700));
  EXPECT_EQ(t->marks[2].ahead, W(150, 700));
  EXPECT_FALSE(t->fits);
  EXPECT_EQ(TrackRecorder().Finish(W(0, 1), true), nullptr);  // no mark, no track
}

TEST(TrialTracksTest, MeetsTheSameStateAtTheSameEventInsideItsWindowOnly) {
  TrackRecorder r;
  r.Mark(4096, StateFingerprint{7, 8}, LimitWindow{});
  r.Mark(8192, StateFingerprint{9, 10}, LimitWindow{});
  TrialTracks tracks;
  tracks.Add(r.Finish(W(1000, 2000), true));
  EXPECT_FALSE(tracks.Meet(4096, StateFingerprint{7, 9}, Bytes(1500)));  // another state
  EXPECT_FALSE(tracks.Meet(8192, StateFingerprint{7, 8}, Bytes(1500)));  // that state, but later
  EXPECT_FALSE(tracks.Meet(4096, StateFingerprint{7, 8}, Bytes(999)));   // outside the window
  EXPECT_FALSE(tracks.Meet(4095, StateFingerprint{7, 8}, Bytes(1500)));  // no mark there
  EXPECT_EQ(tracks.met(), 0u);
  EXPECT_EQ(tracks.Meet(8192, StateFingerprint{9, 10}, Bytes(2000)), std::optional<bool>(true));
  EXPECT_EQ(tracks.met(), 1u);
}

// Same events at two limits that decide alike: the same fingerprint, and
// CloneAt keeps it; a different placement changes it.
constexpr uint64_t kAll = ~uint64_t{0};

TEST(BfcFingerprintTest, NamesTheStateUpToTheLimit) {
  BfcOptions small, large;
  small.memory_limit = Bytes::MiB(64);
  large.memory_limit = Bytes::MiB(64) + Bytes(256 * 1000);
  BfcAllocator a(small), b(large), untracked(small);
  ASSERT_TRUE(a.TrackLimitWindow());
  ASSERT_TRUE(b.TrackLimitWindow());
  EXPECT_EQ(untracked.Fingerprint(kAll), std::nullopt);
  EXPECT_EQ(a.Fingerprint(kAll), b.Fingerprint(kAll));  // both empty
  std::mt19937_64 rng(11);
  std::vector<std::pair<Handle, Handle>> live;
  for (uint64_t i = 1; i <= 400; ++i) {
    if (!live.empty() && rng() % 2 == 0) {
      const size_t k = rng() % live.size();
      a.Free(live[k].first);
      b.Free(live[k].second);
      live[k] = live.back();
      live.pop_back();
    } else {
      AllocRequest r;
      r.id = BufferId(i);
      r.bytes = Bytes(256 + rng() % 100000);
      const AllocResult ra = a.Allocate(r), rb = b.Allocate(r);
      ASSERT_TRUE(ra.ok() && rb.ok());
      live.emplace_back(ra.handle, rb.handle);
    }
  }
  ASSERT_TRUE(a.limit_window().Contains(large.memory_limit));  // far below 64 MiB: they decided alike
  ASSERT_TRUE(a.Fingerprint(kAll).has_value());
  EXPECT_EQ(a.Fingerprint(kAll), b.Fingerprint(kAll));
  const std::unique_ptr<Allocator> c = a.CloneAt(large.memory_limit);
  EXPECT_EQ(dynamic_cast<const BfcAllocator&>(*c).Fingerprint(kAll), a.Fingerprint(kAll));
  // Only as much work as allowed: one step a chunk.
  const BfcAllocator& cut = a;
  uint64_t chunks = 0;
  for (uint64_t allowed = 0; !cut.Fingerprint(allowed); ++allowed) chunks = allowed + 1;
  struct Count : MemoryMapVisitor {
    uint64_t blocks = 0;
    void OnRegion(const RegionInfo&) override {}
    void OnBlock(const BlockInfo&) override { ++blocks; }
  } walk;
  a.WalkMemoryMap(walk);
  EXPECT_EQ(chunks, walk.blocks);  // every chunk, free or in use
  EXPECT_GT(chunks, 10u);
  EXPECT_EQ(cut.Fingerprint(chunks), a.Fingerprint(kAll));
  // The same request, but the buffer another: another state.
  AllocRequest r;
  r.id = BufferId(9001);
  r.bytes = Bytes(4096);
  ASSERT_TRUE(a.Allocate(r).ok());
  r.id = BufferId(9002);
  ASSERT_TRUE(b.Allocate(r).ok());
  EXPECT_NE(a.Fingerprint(kAll), b.Fingerprint(kAll));
}

// A marker walks at most one chunk per 4 events replayed (a stride's worth
// to start): with C chunks and stride 8 from event 0, its first mark is at
// the first point i with (i + 8) / 4 >= C, the next where another C is earned.
TEST(TrialMarkerTest, MarksOnlyWhereTheTrialCanAffordTheWalk) {
  BfcOptions options;
  options.memory_limit = Bytes::MiB(64);
  BfcAllocator a(options);
  ASSERT_TRUE(a.TrackLimitWindow());
  std::vector<Handle> handles;
  for (uint64_t i = 1; i <= 40; ++i) {
    AllocRequest r;
    r.id = BufferId(i);
    r.bytes = Bytes(256 * i);
    const AllocResult res = a.Allocate(r);
    ASSERT_TRUE(res.ok());
    handles.push_back(res.handle);
  }
  // Every other one freed: 20 in use, 20 free gaps before them, and the tail: 41 chunks.
  for (size_t k = 0; k < handles.size(); k += 2) a.Free(handles[k]);
  ASSERT_FALSE(a.Fingerprint(40).has_value());
  ASSERT_TRUE(a.Fingerprint(41).has_value());
  TrialTracks none;
  TrialMarker marker(a, none, options.memory_limit, /*verdict_only=*/true, 0, 8);
  std::vector<uint64_t> marked;
  for (uint64_t i = 0; i <= 400; i += 8) ASSERT_TRUE(marker.AtPoint(i));  // nothing finished to meet
  std::shared_ptr<const TrialTrack> t = marker.Finish(true);
  ASSERT_NE(t, nullptr);
  for (const TrialTrack::Mark& m : t->marks) marked.push_back(m.event);
  // (i + 8) / 4 - work >= 41: i = 160 (work 42), then 328 (work 84).
  EXPECT_EQ(marked, (std::vector<uint64_t>{160, 328}));
  EXPECT_EQ(marker.met(), std::nullopt);
}

// Churn whose working set swells and shrinks back: runs at nearby limits
// part at a swell and hold the same chunks again once it has drained.
std::string SwellingChurn(uint64_t seed, int events) {
  return testing::ChurnWithCap(seed, events, 0.4, [](int i) {
    const int phase = i % 4000;
    return static_cast<size_t>(phase < 2000 ? 10 + phase / 20 : 0);  // up to 110 live, then drained
  });
}

// bfc with and without growth (a growing pool's fingerprint holds its regions and curr).
TEST(ReconvergenceTest, AVerdictOnlyTrialEndsAsAFreshOne) {
  for (const AllocatorConfig& config : {testing::Config("bfc"), testing::Config("bfc", {"allow_growth=true"})})
  for (const uint64_t seed : testing::SpreadForThisBuild<uint64_t>({1, 2, 3}, 1)) {
    const testing::TestTrace t = testing::TraceFromText(SwellingChurn(seed, 40000));
    const TrialTarget target = testing::Target(t, config);
    std::unique_ptr<SharedTrials> shared = SharedTrials::Make(target);
    ASSERT_NE(shared, nullptr);
    const uint64_t peak = t.peak_live_bytes().value();
    std::vector<uint64_t> limits;
    for (uint64_t l = peak; l <= 2 * peak; l += peak / 61 + 256) limits.push_back(l);
    for (uint64_t l = 2 * peak; l >= peak; l -= peak / 53 + 1) limits.push_back(l);
    uint64_t met = 0, met_past_start = 0;
    for (const uint64_t l : limits) {
      TrialOptions verdict;
      verdict.verdict_only = true;
      absl::StatusOr<TrialResult> fresh = RunTrial(target, Bytes(l), TrialOptions{});
      absl::StatusOr<TrialResult> shared_trial = shared->Run(Bytes(l), verdict);
      ASSERT_TRUE(fresh.ok() && shared_trial.ok());
      const std::string where = fmt::format("{} seed {} limit {}", RowLabel(config), seed, l);
      EXPECT_EQ(shared_trial->failures, fresh->failures) << where;
      if (!shared_trial->met) {
        EXPECT_EQ(shared_trial->oom, fresh->oom) << where;
        EXPECT_EQ(shared_trial->first_failure.has_value(), fresh->first_failure.has_value()) << where;
      } else {
        ++met;
        if (shared_trial->summary.events_read > 0) ++met_past_start;
        EXPECT_LT(shared_trial->summary.events_read, fresh->summary.events_read) << where;  // it stopped early
      }
    }
    // Worth something only if trials met, and not only at the first event.
    const std::string where = fmt::format("{} seed {}: {} of {} met", RowLabel(config), seed, met, limits.size());
    EXPECT_EQ(shared->met(), met) << where;
    EXPECT_GT(met, limits.size() / 4) << where;
    EXPECT_GT(met_past_start, 0u) << where;
  }
}

}  // namespace
}  // namespace hbmsim
