// Every cause of reserved each policy can give is worked by hand, and no
// policy gives a cause it does not declare (Allocator::ReservedCauses):
//   1. each hand-worked case (reserved_parts_cases.h) has the parts worked out
//      in its comment, adding up to the policy's ReservedBytes();
//   2. every registered policy's declared causes each appear in a case of
//      that policy, so a cause added to a CauseOf without a case fails here;
//   3. random programs over every registered policy (and the option variants
//      that change its causes) never make CauseOf give an undeclared cause,
//      together reach every declared one, and the parts add up after every
//      step.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fmt/ranges.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "tests/common/random_ops.h"
#include "tests/allocator/core/reserved_parts_cases.h"

namespace hbmsim::testing {
namespace {

std::vector<WorkedCase> AllWorkedCases() {
  std::vector<WorkedCase> all;
  for (auto cases :
       {TorchWorkedCases(), BfcWorkedCases(), TpuWorkedCases(), CudaAsyncAndBaselineWorkedCases()}) {
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

// The causes named in a PartsText ("requested" is no cause: it is split by
// the caller's labels), with their keys.
std::set<std::pair<std::string, std::string>> CausesIn(const std::string& parts) {
  std::set<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at < parts.size()) {
    size_t end = parts.find("; ", at);
    if (end == std::string::npos) end = parts.size();
    const std::string item = parts.substr(at, end - at);
    const std::string label = item.substr(0, item.find('='));
    const size_t bracket = label.find('[');
    if (label != "requested") {
      out.insert(
          bracket == std::string::npos
              ? std::pair{label, std::string()}
              : std::pair{label.substr(0, bracket), label.substr(bracket + 1, label.size() - bracket - 2)});
    }
    at = end + 2;
  }
  return out;
}

bool Declares(const Allocator& a, std::string_view cause) {
  const std::span<const std::string_view> causes = a.ReservedCauses();
  return std::find(causes.begin(), causes.end(), cause) != causes.end();
}

class ReservedPartsByHand : public ::testing::TestWithParam<WorkedCase> {};

TEST_P(ReservedPartsByHand, PartsAsWorkedOut) {
  const WorkedCase& c = GetParam();
  const std::unique_ptr<Allocator> a = c.build();
  ASSERT_TRUE(a->CheckInvariants().ok()) << a->CheckInvariants();
  EXPECT_EQ(a->name(), c.policy);
  EXPECT_EQ(PartsText(*a), c.parts);
  // The case shows the part it is named for, and its policy declares every cause it shows.
  const auto shown = CausesIn(c.parts);
  EXPECT_TRUE(shown.contains({c.cause, c.key})) << PartLabel(c.cause, c.key) << " not in " << c.parts;
  for (const auto& [cause, key] : shown)
    EXPECT_TRUE(Declares(*a, cause)) << cause << " undeclared by " << c.policy;
}

std::string CaseName(const ::testing::TestParamInfo<WorkedCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Torch, ReservedPartsByHand, ::testing::ValuesIn(TorchWorkedCases()), CaseName);
INSTANTIATE_TEST_SUITE_P(Bfc, ReservedPartsByHand, ::testing::ValuesIn(BfcWorkedCases()), CaseName);
INSTANTIATE_TEST_SUITE_P(Tpu, ReservedPartsByHand, ::testing::ValuesIn(TpuWorkedCases()), CaseName);
INSTANTIATE_TEST_SUITE_P(CudaAsyncAndBaselines, ReservedPartsByHand,
                         ::testing::ValuesIn(CudaAsyncAndBaselineWorkedCases()), CaseName);

// The live intervals of `ops`, as the scenario gives the offline planner
// (a buffer's key is its alloc's event index, RequestOf's).
std::vector<BufferInterval> IntervalsOf(const std::vector<Op>& ops) {
  std::vector<BufferInterval> out;
  std::map<uint64_t, size_t> open;  // buffer id -> its interval
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kAlloc && op.bytes > 0) {
      open[op.id] = out.size();
      out.push_back({.key = i, .size = op.bytes, .start = i, .end = ~uint64_t{0}});
    } else if ((op.kind == OpKind::kFree || op.kind == OpKind::kCompleteFree) && open.contains(op.id)) {
      out[open[op.id]].end = i;
    }
  }
  return out;
}

// `spec` built at `limit`, with `sets` applied (--set KEY=VALUE).
std::unique_ptr<Allocator> BuildPolicy(const PolicySpec& spec, const std::vector<std::string>& sets,
                                       Bytes limit, const std::vector<Op>& ops) {
  AllocatorConfig config = DefaultConfig(spec);
  for (const std::string& set : sets)
    EXPECT_TRUE(ApplySetOption(config, set).ok()) << spec.name << " " << set;
  if (spec.plan) {
    absl::StatusOr<LimitedFactory> factory = spec.plan(config.options, IntervalsOf(ops));
    EXPECT_TRUE(factory.ok()) << factory.status();
    if (!factory.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<Allocator>> a = (*factory)(limit);
    return a.ok() ? std::move(*a) : nullptr;
  }
  absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(config, limit);
  EXPECT_TRUE(a.ok()) << spec.name << ": " << a.status();
  return a.ok() ? std::move(*a) : nullptr;
}

TEST(ReservedCausesTest, EveryDeclaredCauseOfEveryPolicyIsWorkedByHand) {
  std::map<std::string, std::set<std::string>> worked;  // policy -> causes its cases show
  for (const WorkedCase& c : AllWorkedCases()) {
    for (const auto& [cause, key] : CausesIn(c.parts)) worked[c.policy].insert(cause);
  }
  for (const PolicySpec& spec : BuiltinPolicies().policies()) {
    const std::unique_ptr<Allocator> a = BuildPolicy(spec, {}, Bytes(64 * kMiB), {});
    ASSERT_NE(a, nullptr) << spec.name;
    EXPECT_FALSE(a->ReservedCauses().empty()) << spec.name;
    for (std::string_view cause : a->ReservedCauses()) {
      EXPECT_TRUE(worked[spec.name].contains(std::string(cause)))
          << spec.name << " declares " << cause
          << " but no case in tests/allocator/core/reserved_parts_*_test.cc works it";
    }
  }
}

// Allocs, frees and queued frees on two streams, and on a policy with
// programs a load every 16 steps (the oldest unloaded every 48): after each
// step every part's cause is declared and the parts add up. Adds the causes
// seen to `seen`.
void ExpectOnlyDeclaredCauses(const PolicySpec& spec, const std::vector<std::string>& sets, uint64_t seed,
                              std::set<std::string>& seen) {
  ProgramShape shape;
  shape.num_ops = 600;
  shape.max_bytes = 24 * kMiB;
  shape.queued_free_fraction = 0.3;
  shape.num_streams = 2;
  const std::vector<Op> ops = GenerateProgram(seed, shape);
  const std::unique_ptr<Allocator> a = BuildPolicy(spec, sets, Bytes(256 * kMiB), ops);
  ASSERT_NE(a, nullptr) << spec.name;
  const std::string where = fmt::format("{} {} seed {}", spec.name, fmt::join(sets, " "), seed);
  std::map<uint64_t, Handle> handles;
  uint64_t next_program = 1, oldest_program = 1;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::kAlloc) {
      const AllocResult r = a->Allocate(RequestOf(ops[i], i));
      if (r.ok()) handles[ops[i].id] = r.handle;
    } else {
      ApplyRelease(*a, ops[i], handles);
    }
    if (a->SupportsPrograms() && i % 16 == 0)
      a->LoadProgram(ProgramId(next_program++), Bytes(kMiB), EventIndex(i));
    if (a->SupportsPrograms() && i % 48 == 47) a->UnloadProgram(ProgramId(oldest_program++));
    const ReservedWalk w = WalkReserved(*a, 0);
    Bytes sum = w.requested;
    for (const ReservedPart& p : w.parts) {
      sum += p.bytes;
      seen.insert(p.cause);
      ASSERT_TRUE(Declares(*a, p.cause)) << where << ": step " << i << " gives " << p.cause;
    }
    ASSERT_EQ(sum, w.reserved) << where << ": step " << i;
    ASSERT_EQ(w.reserved, a->ReservedBytes()) << where << ": step " << i;
  }
}

TEST(ReservedCausesTest, RandomProgramsGiveOnlyDeclaredCauses) {
  // Options that change which causes a policy gives; every other policy runs with its defaults.
  const std::map<std::string, std::vector<std::vector<std::string>>> variants = {
      {"torch", {{}, {"expandable_segments=true"}, {"max_split_size=21MiB"}}},
      {"bfc", {{}, {"allow_growth=true"}, {"allow_growth=true", "garbage_collection=true"}}},
      {"cuda_async", {{}, {"release_threshold=0"}}},
  };
  for (const PolicySpec& spec : BuiltinPolicies().policies()) {
    const auto it = variants.find(spec.name);
    std::set<std::string> seen;
    for (const std::vector<std::string>& sets :
         it == variants.end() ? std::vector<std::vector<std::string>>{{}} : it->second) {
      for (uint64_t seed : {1u, 2u}) ExpectOnlyDeclaredCauses(spec, sets, seed, seen);
    }
    // ...and together they reach every declared cause: no declaration is wider than what CauseOf gives.
    const std::unique_ptr<Allocator> a = BuildPolicy(spec, {}, Bytes(kMiB), {});
    ASSERT_NE(a, nullptr) << spec.name;
    const std::set<std::string> declared(a->ReservedCauses().begin(), a->ReservedCauses().end());
    EXPECT_EQ(seen, declared) << spec.name;
  }
}

}  // namespace
}  // namespace hbmsim::testing
