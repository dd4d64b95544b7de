// The differential fuzzing of differential.h over a few seeds and shapes, in
// the default suite; differential_long_test.cc runs many more (label slow).
#include "tests/common/sanitized_build.h"
#include "tests/hardening/differential.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim::testing {
namespace {

// Per test: ctest runs the tests of this binary in parallel.
std::string ScratchPath(const std::string& name) {
  return ::testing::TempDir() + "/hbmsim_differential_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// Limits that make some seeds fail often and some never.
constexpr uint64_t kLimits[] = {uint64_t{256} << 20, uint64_t{1} << 30, uint64_t{8} << 30};

TEST(DifferentialTest, EveryPolicyAgreesOnRandomPrograms) {
  ProgramShape shape;
  shape.num_ops = 1500;
  int failures_at_256_mib = 0;
  int failures_at_1_gib = 0;
  int failures_at_8_gib = 0;
  // 3 seeds under the sanitizers (tests/common/sanitized_build.h): one per limit.
  const uint64_t seeds = ForThisBuild<uint64_t>(6, 3);
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    shape.num_streams = seed % 2 == 0 ? 2 : 1;
    const Bytes limit(kLimits[seed % 3]);
    int& failures = seed % 3 == 0   ? failures_at_256_mib
                    : seed % 3 == 2 ? failures_at_8_gib
                                    : failures_at_1_gib;
    EXPECT_EQ(
        RunDifferential(seed, GenerateProgram(seed, shape), limit, ScratchPath("program.trace"), &failures),
        "");
  }
  // The properties about failures were exercised, and a roomy limit fits all.
  EXPECT_GT(failures_at_256_mib, 100);
  EXPECT_EQ(failures_at_8_gib, 0);
}

// Small, unaligned sizes: rounding differs most between policies here.
TEST(DifferentialTest, SmallUnalignedSizes) {
  ProgramShape shape;
  shape.num_ops = 1500;
  shape.max_bytes = 4096;
  shape.zero_byte_probability = 0.05;
  for (uint64_t seed = 100; seed < ForThisBuild<uint64_t>(104, 102); ++seed) {
    EXPECT_EQ(
        RunDifferential(seed, GenerateProgram(seed, shape), Bytes(256 << 10), ScratchPath("program.trace")),
        "");
  }
}

TEST(DifferentialTest, ReplayingTwiceGivesTheSameDigestUnderEveryPolicy) {
  ProgramShape shape;
  shape.num_ops = 800;
  const std::vector<Op> ops = GenerateProgram(7, shape);
  const std::string trace = WriteProgramTrace(ops, ScratchPath("program.trace"));
  std::vector<PolicyRun> first = BuildEveryPolicy(Bytes(uint64_t{1} << 30), trace);
  std::vector<PolicyRun> second = BuildEveryPolicy(Bytes(uint64_t{1} << 30), trace);
  ASSERT_EQ(first.size(), second.size());
  for (size_t p = 0; p < first.size(); ++p) {
    const RunOutcome a = RunProgram(*first[p].allocator, ops, /*paranoid=*/true);
    const RunOutcome b = RunProgram(*second[p].allocator, ops, /*paranoid=*/false);
    EXPECT_TRUE(a.invariants.ok()) << first[p].name << ": " << a.invariants.message();
    EXPECT_EQ(a.digest, b.digest) << first[p].name;
    EXPECT_GT(std::count(a.digest.begin(), a.digest.end(), '\n'), 400) << first[p].name;
  }
}

}  // namespace
}  // namespace hbmsim::testing
