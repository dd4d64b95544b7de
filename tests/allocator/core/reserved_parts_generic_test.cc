// Reserved explained by hand for the policies that name few causes: CUDA's
// stream-ordered pool (cuda_async: pool_free of its own, GenericCause for
// the rest) and the baselines and bounds, which keep GenericCause
// (allocator/core/reserved_parts.cc): rounding for a live block, cached_free
// for a free one.
#include <memory>
#include <vector>

#include "allocator/baselines/fit_allocator.h"
#include "allocator/baselines/ideal_allocator.h"
#include "allocator/baselines/offline_allocator.h"
#include "allocator/baselines/paged_allocator.h"
#include "allocator/cuda_async/cuda_async_allocator.h"
#include "sim/all_layers.h"
#include "tests/allocator/core/reserved_parts_cases.h"

namespace hbmsim::testing {
namespace {

std::unique_ptr<CudaAsyncAllocator> MakeCudaAsync() {
  CudaAsyncOptions o;
  o.memory_limit = Bytes(64 * kMiB);
  return std::make_unique<CudaAsyncAllocator>(o);
}

// cuda_async (allocator/cuda_async/cuda_async_allocator.h): 1000 B rounds to
// the 256 B alignment, 1024 (rounding 24), at the low end of a new VA range,
// whose first 2 MiB granule is mapped: reserved = mapped granules = 2 MiB,
// the granule's other 2 MiB − 1024 the pool's, kept (TF's release threshold
// is the pool size, so no trim ever unmaps it).
std::unique_ptr<Allocator> CudaAsyncOneSmallBuffer() {
  auto a = MakeCudaAsync();
  AllocBytes(*a, 1, 1000);
  return a;
}

// 1 MiB at [0, 1 MiB) of the granule, 1 MiB best fit into the free rest
// [1, 2); the first's free requested on its stream, not completed, is
// pending: the granule is wholly held, nothing is pool_free.
std::unique_ptr<Allocator> CudaAsyncQueuedFree() {
  auto a = MakeCudaAsync();
  const AllocResult x = AllocBytes(*a, 1, kMiB);
  AllocBytes(*a, 2, kMiB);
  a->RequestFree(x.handle);
  return a;
}

// first_fit and best_fit (allocator/baselines/fit_allocator.h): one region of
// the 64 KiB limit, requests rounded to 256 B. 1000 B (1024) at [0, 1024),
// 3000 B (3072, rounding 72) at [1024, 4096); freeing the first leaves two
// free blocks: 1024 + (64 KiB − 4096) = 64 KiB − 3072 cached_free.
std::unique_ptr<Allocator> FitWithLowBlockFreed(FitStrategy strategy) {
  FitOptions o;
  o.memory_limit = Bytes(64 * kKiB);
  o.strategy = strategy;
  auto a = std::make_unique<FitAllocator>(o);
  const AllocResult x = AllocBytes(*a, 1, 1000);
  AllocBytes(*a, 2, 3000);
  a->Free(x.handle);
  return a;
}

// ideal (allocator/baselines/ideal_allocator.h): live bytes packed from 0 as
// requested, never rounded (rounding 0 B over 2 blocks); the rest of the
// 64 KiB limit is cached_free: 64 KiB − 4000.
std::unique_ptr<Allocator> IdealTwoBuffers() {
  auto a = std::make_unique<IdealAllocator>(Bytes(64 * kKiB));
  AllocBytes(*a, 1, 1000);
  AllocBytes(*a, 2, 3000);
  return a;
}

// offline (allocator/baselines/offline_allocator.h): a plan of one 1000 B
// buffer alive from event 1 on, aligned to 256 B: 1024 at 0 (rounding 24),
// the rest of the 64 KiB limit free.
std::unique_ptr<Allocator> OfflineOneBuffer() {
  const std::vector<BufferInterval> intervals = {{.key = 1, .size = 1000, .start = 1, .end = ~uint64_t{0}}};
  auto plan = std::make_shared<const OfflinePlan>(PlanOffline(intervals, 256, PlannerRules::kHbmsim));
  auto a = std::make_unique<OfflineAllocator>(plan, Bytes(64 * kKiB));
  AllocBytes(*a, 1, 1000);
  return a;
}

// paged (allocator/baselines/paged_allocator.h): a request takes whole
// pages, and a freed page stays mapped. With 4 KiB pages, 1000 B takes 1
// page, 5000 B 2 and 9000 B 3: 6 pages mapped, 24 KiB reserved. Freeing the
// 5000 B leaves its 2 pages mapped and free (8 KiB cached_free); the live
// 10000 B hold 4 pages, 16384 − 10000 = 6384 of them rounding.
std::unique_ptr<Allocator> PagedMiddleBufferFreed() {
  PagedOptions o;
  o.memory_limit = Bytes(64 * kKiB);
  o.page_size = 4 * kKiB;
  auto a = std::make_unique<PagedAllocator>(o);
  AllocBytes(*a, 1, 1000);
  const AllocResult middle = AllocBytes(*a, 2, 5000);
  AllocBytes(*a, 3, 9000);
  a->Free(middle.handle);
  return a;
}

}  // namespace

std::vector<WorkedCase> CudaAsyncAndBaselineWorkedCases() {
  const std::string fit_parts =
      fmt::format("requested=3000; rounding=72/1; cached_free={}/2", 64 * kKiB - 3072);
  return {
      {"RoundingAndPoolFree", "cuda_async", "pool_free", "", CudaAsyncOneSmallBuffer,
       fmt::format("requested=1000; rounding=24/1; pool_free={}/1", 2 * kMiB - 1024)},
      {"QueuedFreeIsPending", "cuda_async", "pending_free", "", CudaAsyncQueuedFree,
       fmt::format("requested={}; rounding=0/1; pending_free={}/1", kMiB, kMiB)},
      {"FirstFitCachedFree", "first_fit", "cached_free", "",
       [] { return FitWithLowBlockFreed(FitStrategy::kFirstFit); }, fit_parts},
      {"BestFitCachedFree", "best_fit", "cached_free", "",
       [] { return FitWithLowBlockFreed(FitStrategy::kBestFit); }, fit_parts},
      {"IdealNeverRounds", "ideal", "cached_free", "", IdealTwoBuffers,
       fmt::format("requested=4000; rounding=0/2; cached_free={}/1", 64 * kKiB - 4000)},
      {"OfflinePlannedBlock", "offline", "cached_free", "", OfflineOneBuffer,
       fmt::format("requested=1000; rounding=24/1; cached_free={}/1", 64 * kKiB - 1024)},
      {"PagedWholePagesAndFreedPagesStayMapped", "paged", "cached_free", "", PagedMiddleBufferFreed,
       "requested=10000; rounding=6384/2; cached_free=8192/1"},
  };
}

}  // namespace hbmsim::testing
