// A replay in steady state makes no heap allocation: repeating a workload of
// allocations, frees and queued frees (with defragmentations) on a policy
// that already ran it once allocates nothing. Counted by replacing the global
// operator new for this test binary; counting is on only inside the measured
// section.
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "allocator/tpu/tpu_allocator.h"
#include "gtest/gtest.h"
#include "tpu_test_util.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-declarations"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

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
  g_allocations = 0;
  g_counting = true;
  const int64_t defragmentations = Phase(a, live, queued);
  g_counting = false;
  EXPECT_GT(defragmentations, 0);
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_TRUE(a.CheckInvariants().ok());
}

}  // namespace
}  // namespace hbmsim::testing
