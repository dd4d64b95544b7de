// A replay in steady state makes no heap allocation: repeating a workload of
// allocations, frees and queued frees (with defragmentations) on a policy
// that already ran it once allocates nothing. Counted by
// tests/common/heap_counter, which replaces operator new for this test binary.
#include <cstdlib>
#include <new>
#include <random>

#include "allocator/tpu/tpu_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "tests/common/heap_counter.h"
#include "tpu_test_util.h"

namespace hbmsim::testing {
namespace {

// 20000 seeded ops on a 256 MiB HBM: allocations, frees and queued frees
// completed later (or early, by rung 1), ending with everything released, so
// every phase starts from the same empty HBM. Returns the defragmentations it
// caused, so the test knows rung 2 ran.
int64_t Phase(TpuAllocator& a, std::vector<Handle>& live, std::vector<Handle>& queued) {
  std::mt19937_64 rng(7);
  const int64_t before = a.counters().defragmentations;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t dice = rng() % 6;
    if (!queued.empty() && dice == 0) {
      a.CompleteFree(queued.back());
      queued.pop_back();
    } else if (!live.empty() && dice <= 2) {
      const size_t k = rng() % live.size();
      if (dice == 1) {
        a.RequestFree(live[k]);
        queued.push_back(live[k]);
      } else {
        a.Free(live[k]);
      }
      live[k] = live.back();
      live.pop_back();
    } else {
      const AllocResult r = Alloc(a, i, 512 + rng() % (4 * kMiB));
      if (r.ok()) live.push_back(r.handle);
    }
  }
  for (Handle h : live) a.Free(h);
  for (Handle h : queued) a.CompleteFree(h);
  live.clear();
  queued.clear();
  return a.counters().defragmentations - before;
}

TEST(TpuHeapTest, RepeatingAWorkloadAllocatesNothing) {
  TpuAllocator a(Options(256 * kMiB));
  std::vector<Handle> live, queued;
  live.reserve(20000);
  queued.reserve(20000);
  ASSERT_GT(Phase(a, live, queued), 0);
  Phase(a, live, queued);
  const uint64_t before = HeapAllocationCount();
  const int64_t defragmentations = Phase(a, live, queued);
  const uint64_t during = HeapAllocationCount() - before;
  EXPECT_GT(defragmentations, 0);
  EXPECT_EQ(during, 0u);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

}  // namespace
}  // namespace hbmsim::testing
