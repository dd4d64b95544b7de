// The differential fuzzing of differential.h over many seeds, shapes and
// limits (label slow: a minute, not seconds). A failure names its seed; rerun
// one with RunDifferential(seed, GenerateProgram(seed, shape), limit, ...).
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/hardening/differential.h"

namespace hbmsim::testing {
namespace {

std::string ScratchPath(const std::string& name) {
  return ::testing::TempDir() + "/hbmsim_differential_long_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// The seed picks the shape: sizes up to 4 KiB, 1 MiB or 64 MiB, one to three
// streams, and a limit from tight to roomy.
TEST(DifferentialLongTest, SixtySeeds) {
  constexpr uint64_t kMaxBytes[] = {4096, uint64_t{1} << 20, uint64_t{64} << 20};
  constexpr uint64_t kLimitPerMaxByte[] = {64, 256, 4096};  // limit = max_bytes * this / 16
  int failures = 0;
  for (uint64_t seed = 1000; seed < 1060; ++seed) {
    ProgramShape shape;
    shape.num_ops = 2000;
    shape.max_bytes = kMaxBytes[seed % 3];
    shape.num_streams = static_cast<int>(1 + seed % 3);
    shape.zero_byte_probability = 0.02;
    const Bytes limit(shape.max_bytes * kLimitPerMaxByte[(seed / 3) % 3] / 16);
    const std::string broken =
        RunDifferential(seed, GenerateProgram(seed, shape), limit, ScratchPath("program.trace"), &failures);
    ASSERT_EQ(broken, "") << "max_bytes " << shape.max_bytes << " streams " << shape.num_streams;
  }
  EXPECT_GT(failures, 300);
}

}  // namespace
}  // namespace hbmsim::testing
