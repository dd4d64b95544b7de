// Reserved, explained, on every shared recording with a trace (issue 46,
// item 1): under the recording's own allocator and each runtime's model, the
// parts add up to reserved exactly at the peak, at the first failure and at
// the end (and each part of free blocks by who freed it; torch also with
// expandable segments, whose free blocks split at whole pages), and the end's
// reserved is the policy's own counter.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "sim/report/reserved_explained.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/peak_walk.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_config.h"
#include "sim/scenario/scenario_run.h"
#include "tests/common/sanitized_build.h"

namespace hbmsim {
namespace {

const std::string kShared = HBMSIM_SHARED_DIR;

// The folders of ../shared that hold recordings (their README and MANIFEST
// files are skipped), listed, not named one by one: a recording added there
// is checked too.
std::vector<std::string> SharedRecordings() {
  std::vector<std::string> out;
  for (const char* dir : {"torch_snapshots", "families", "profiler", "xla_dumps"}) {
    const std::filesystem::path root = kShared + "/" + dir;
    if (!std::filesystem::is_directory(root)) {
      ADD_FAILURE() << root << " is absent: the shared recordings are not beside the repository";
      continue;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectAddsUp(const std::optional<ReservedMoment>& m, const std::string& where) {
  if (!m) return;
  EXPECT_EQ(m->Sum(), m->reserved) << where;
  Bytes allocated;
  for (const ExplainedPart& p : m->parts) {
    if (p.cause == "requested") allocated += p.bytes;
    // Who freed a part's bytes splits them exactly too.
    Bytes freed;
    for (const FreedBy& f : p.freed_by) freed += f.bytes;
    if (!p.freed_by.empty()) {
      EXPECT_EQ(freed, p.bytes) << where << ": " << p.cause << " " << p.key;
    }
  }
  EXPECT_LE(allocated, m->allocated) << where;
  for (const CachedBlockExplained& b : m->largest_cached) {
    if (b.freed_by) {
      EXPECT_LE(b.freed_by->bytes, b.block.size) << where;
    }
  }
}

// Replays `scenario` under `policy` (with `set`, a --set KEY=VALUE, when not
// empty) as `hbmsim replay` does and checks every moment.
void CheckPolicy(const Scenario& scenario, const std::string& policy, const std::string& file,
                 const std::string& set = "") {
  const std::string where = fmt::format("{} under {} {}", file, policy, set);
  absl::StatusOr<AllocatorConfig> config = ResolveAllocator(BuiltinPolicies(), policy);
  ASSERT_TRUE(config.ok()) << config.status();
  ApplyRecordedSettings(scenario, *config);
  if (!set.empty()) {
    ASSERT_TRUE(ApplySetOption(*config, set).ok()) << where;
  }
  absl::StatusOr<LimitChoice> limit = ResolveLimit(scenario, *config, "");
  const Bytes at = limit.ok() ? limit->limit : Bytes::GiB(80);
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run = ScenarioRun::Prepare(scenario, *config, at, ReplayOptions{});
  ASSERT_TRUE(run.ok()) << where << ": " << run.status();
  ReservedExplainer explainer((*run)->policy(), TopUserFrames((*run)->reader()));
  (*run)->engine().AddObserver(&explainer);
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  ASSERT_TRUE(summary.ok()) << where << ": " << summary.status();
  explainer.Finish(EventIndex(summary->events_read));
  ASSERT_TRUE(WalkPassedOverPeak(scenario, *config, at, ReplayOptions{}, explainer).ok()) << where;
  EXPECT_FALSE(explainer.PeakToWalkAgain().has_value()) << where;
  ExpectAddsUp(explainer.peak(), where + ", at the peak");
  ExpectAddsUp(explainer.first_failure(), where + ", at the first failure");
  ExpectAddsUp(explainer.end(), where + ", at the end");
  ASSERT_TRUE(explainer.end().has_value()) << where;
  EXPECT_EQ(explainer.end()->reserved, (*run)->policy().ReservedBytes()) << where;
  const AllocatorStats stats = (*run)->policy().GetStats();
  if (stats.pool_bytes) {
    EXPECT_EQ(static_cast<int64_t>(explainer.end()->reserved.value()), *stats.pool_bytes) << where;
  }
  if (summary->failures > 0) {
    EXPECT_TRUE(explainer.first_failure().has_value()) << where;
  }
}

TEST(ReservedExplainedTest, PartsAddUpOnEverySharedRecordingWithATrace) {
  size_t checked = 0;
  // Every recording; 8 spread over the folders under the sanitizers
  // (tests/common/sanitized_build.h).
  for (const std::string& file : testing::SpreadForThisBuild(SharedRecordings(), 8)) {
    absl::StatusOr<Scenario> scenario = OpenScenario(file, ScenarioRequest{});
    // A state without a trace (docubox_state_only) or a log has no replay to explain.
    if (!scenario.ok() || scenario->recording->facts().state_only ||
        scenario->recording->facts().held_state != nullptr)
      continue;
    const PolicySpec* own = RecordedPolicy(*scenario->recording);
    std::vector<std::string> policies = {"bfc", "cuda_async", "torch", "tpu"};
    if (own != nullptr && std::find(policies.begin(), policies.end(), own->name) == policies.end()) {
      policies.push_back(std::string(own->name));
    }
    for (const std::string& policy : policies) CheckPolicy(*scenario, policy, file);
    // PyTorch's recordings again with expandable segments, whose free blocks
    // split into whole pages and partial ones.
    if (own != nullptr && own->name == "torch") CheckPolicy(*scenario, "torch", file, "expandable_segments=true");
    ++checked;
  }
  // 17 snapshots less the state-only ones, 14 family members, 6 profiles, 2 XLA dumps.
  EXPECT_GE(checked, testing::ForThisBuild<size_t>(30, 6));
}

}  // namespace
}  // namespace hbmsim
