// Every registered policy answers what sim/ asks of a row (docs/
// contributing.md, "Add a policy"): its texts, each capability set whole or
// left unset on purpose, and a place in the fuzzer's differential. The
// table says what each row answers; a policy registered without a line here
// fails, so its author decides the answers rather than inheriting silence.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/policy_registry.h"
#include "tests/hardening/differential.h"

namespace hbmsim {
namespace {

struct Answers {
  bool fast_size;       // SharedTrialSupport set: size's trials share checkpoints
  bool state_analysis;  // inspect analyses a state it holds
};

const std::map<std::string, Answers>& ExpectedAnswers() {
  static const auto* const answers = new std::map<std::string, Answers>{
      {"best_fit", {false, false}},  {"bfc", {true, false}},   {"cuda_async", {true, false}},
      {"first_fit", {false, false}}, {"ideal", {false, false}}, {"next_fit", {false, true}},
      {"offline", {false, false}},   {"paged", {false, false}}, {"torch", {true, true}},
      {"tpu", {false, false}},
  };
  return *answers;
}

// A request twice the limit: every policy fails it, so its failure text has a failure to tell.
FailureRecord FailTwiceTheLimit(Allocator& a, Bytes limit) {
  AllocRequest req;
  req.id = BufferId(1);
  req.bytes = Bytes(limit.value() * 2);
  const AllocResult r = a.Allocate(req);
  EXPECT_FALSE(r.ok()) << a.name();
  FailureRecord f;
  f.id = 1;
  f.requested = req.bytes;
  f.rounded = r.rounded;
  f.free_bytes = r.free_bytes;
  f.largest_free_block_bytes = r.largest_free_block;
  return f;
}

TEST(PolicyCapabilitiesTest, EveryRegisteredPolicyAnswersEachCapability) {
  const Bytes limit(uint64_t{1} << 20);
  const std::string trace = ::testing::TempDir() + "/capabilities.trace";
  std::vector<testing::PolicyRun> runs = testing::BuildEveryPolicy(limit, testing::WriteProgramTrace({}, trace));
  // The fuzzer's differential (tests/fuzz/fuzz_policies.cc) builds every row.
  ASSERT_EQ(runs.size(), BuiltinPolicies().policies().size());
  for (testing::PolicyRun& run : runs) {
    SCOPED_TRACE(run.name);
    const PolicySpec& spec = *BuiltinPolicies().Find(run.name);
    auto expected = ExpectedAnswers().find(spec.name);
    ASSERT_NE(expected, ExpectedAnswers().end()) << spec.name << " has no line in ExpectedAnswers()";
    Allocator& a = *run.allocator;
    ASSERT_TRUE(spec.texts.at_failure && spec.texts.stats);
    EXPECT_NE(spec.texts.stats(a), "");
    // A planning policy places only the requests of its plan (here none).
    const FailureRecord failure = spec.plan ? FailureRecord{} : FailTwiceTheLimit(a, limit);
    EXPECT_NE(spec.texts.at_failure(a, failure), "");
    const SharedTrialSupport& fast = spec.shared_trials;
    EXPECT_EQ(fast.windows != nullptr, fast.plain_loop != nullptr) << "set both or neither";
    EXPECT_EQ(fast.windows != nullptr, expected->second.fast_size);
    if (fast.windows != nullptr) EXPECT_NE(fast.windows(a), nullptr);
    const StateAnalysisSupport& state = spec.state_analysis;
    EXPECT_EQ(static_cast<bool>(state.analyze), static_cast<bool>(state.probe)) << "set both or neither";
    EXPECT_EQ(static_cast<bool>(state.analyze), expected->second.state_analysis);
    if (state.probe) EXPECT_EQ(state.probe(a, Bytes(4096), StreamId(0)).requested, Bytes(4096));
  }
}

}  // namespace
}  // namespace hbmsim
