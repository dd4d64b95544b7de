// Random programs with several streams and queued frees: the invariants hold
// after every op, two runs agree, a failed request was larger than the
// largest free block it reported, and a request of exactly that block fits.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/random_ops.h"
#include "tests/allocator/cuda_async/cuda_async_test_util.h"

namespace hbmsim::testing {
namespace {

ProgramShape Shape(uint64_t seed) {
  ProgramShape shape;
  shape.num_ops = 1500;
  shape.max_bytes = uint64_t{24} << 20;
  shape.num_streams = 1 + static_cast<int>(seed % 3);
  shape.queued_free_fraction = 0.4;
  return shape;
}

TEST(CudaAsyncPropertyTest, InvariantsHoldAndRunsRepeat) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<Op> ops = GenerateProgram(seed, Shape(seed));
    CudaAsyncAllocator first(SeededPool(uint64_t{256} << 20, seed));
    CudaAsyncAllocator second(SeededPool(uint64_t{256} << 20, seed));
    const RunOutcome a = RunProgram(first, ops, /*paranoid=*/true);
    const RunOutcome b = RunProgram(second, ops, /*paranoid=*/false);
    EXPECT_TRUE(a.invariants.ok()) << "seed " << seed << ": " << a.invariants.message();
    EXPECT_EQ(a.digest, b.digest) << "seed " << seed;
  }
}

// After each failure, the largest free block it reported is tried on a copy
// of the history: it must fit (the ladder tries every candidate).
TEST(CudaAsyncPropertyTest, TheReportedLargestFreeBlockFitsAndTheRequestDidNot) {
  int failures = 0;
  for (uint64_t seed = 11; seed <= 14; ++seed) {
    const std::vector<Op> ops = GenerateProgram(seed, Shape(seed));
    CudaAsyncAllocator a(SeededPool(uint64_t{128} << 20, seed));
    std::map<uint64_t, Handle> handles;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind != OpKind::kAlloc) {
        ApplyRelease(a, op, handles);
        continue;
      }
      const AllocResult r = Alloc(a, op.id, op.bytes, op.stream);
      if (r.ok()) {
        handles[op.id] = r.handle;
        continue;
      }
      ++failures;
      ASSERT_GT(r.rounded, r.largest_free_block) << "seed " << seed << " op " << i;
      ASSERT_EQ(r.status, ClassifyFailure(r.rounded, r.free_bytes));
      if (r.largest_free_block.is_zero()) continue;
      const AllocResult probe = Alloc(a, 1u << 30, r.largest_free_block.value(), op.stream);
      ASSERT_TRUE(probe.ok()) << "seed " << seed << " op " << i << ": largest free block "
                              << r.largest_free_block.value() << " did not fit";
      a.Free(probe.handle);
    }
  }
  EXPECT_GT(failures, 50);  // the limit was tight enough to exercise the ladder
}

}  // namespace
}  // namespace hbmsim::testing
