// Helpers for what-if tests: a CompactTrace from trace text, and a brute-force
// scan of pass/fail over a grid of limits (the oracle for the size search).
#ifndef HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_
#define HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "sim/config/allocator_config.h"
#include "sim/whatif/compact_trace.h"
#include "sim/whatif/size_search.h"

namespace hbmsim::testing {

inline CompactTrace TraceFromText(const std::string& text) {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "/hbmsim_whatif_" + (t ? t->name() : "x") + ".trace";
  std::ofstream(path, std::ios::binary) << "# hbmsim-trace v1\n" << text;
  absl::StatusOr<CompactTrace> c = LoadCompactTrace(path, std::nullopt);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *std::move(c) : CompactTrace{};
}

inline AllocatorConfig Config(const std::string& name, const std::vector<std::string>& sets = {}) {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), name);
  EXPECT_TRUE(c.ok());
  for (const std::string& kv : sets) EXPECT_TRUE(ApplySetOption(*c, kv).ok()) << kv;
  return *c;
}

inline SizeResult Size(const CompactTrace& t, const AllocatorConfig& c, uint64_t resolution = 256,
                       int jobs = 1) {
  absl::StatusOr<SizeResult> r = FindMinLimit(t, MakeAllocatorMaker(c, t), SizeOptions{resolution, jobs});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SizeResult{};
}

inline bool Fits(const CompactTrace& t, const AllocatorConfig& c, uint64_t limit) {
  absl::StatusOr<TrialResult> r = RunTrial(t, MakeAllocatorMaker(c, t), Bytes(limit), TrialOptions{});
  return r.ok() && r->ok();
}

}  // namespace hbmsim::testing

#endif  // HBMSIM_TESTS_WHATIF_WHATIF_TEST_UTIL_H_
