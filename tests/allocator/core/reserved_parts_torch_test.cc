// PyTorch's caching allocator, reserved explained by hand: each cause of
// TorchAllocator::CauseOf (allocator/torch/torch_reserved.cc) and each pool
// key. The rules used, from allocator/torch/torch_allocator.h's model
// (c10/cuda/CUDACachingAllocator.cpp):
//   round_size   a request rounds up to a multiple of 512 B;
//   pools        rounded <= 1 MiB is the small pool, else the large pool;
//   segments     small: 2 MiB; large: 20 MiB (kLargeBuffer) for 1–10 MiB
//                requests, else the request rounded up to 2 MiB;
//   placement    the block takes the front of the best-fitting free block;
//   should_split small pool: remaining >= 512 B; large pool: request <
//                max_split_size and remaining > 1 MiB;
//   free         merges with free neighbours; segments go back to the device
//                only in release_cached_blocks (empty_cache()).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "sim/all_layers.h"
#include "tests/allocator/core/reserved_parts_cases.h"

namespace hbmsim::testing {
namespace {

std::unique_ptr<torch::TorchAllocator> MakeTorch(const torch::TorchOptions& o = {}) {
  return std::make_unique<torch::TorchAllocator>(o);
}

torch::TorchOptions Expandable() {
  torch::TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(1024 * kMiB);
  return o;
}

// 4 MiB and 4 MiB − 100 (rounds to 4 MiB: rounding 100) share one 20 MiB
// segment: x takes [0, 4), y [4, 8), the rest [8, 20) stays split off. With
// x freed its 4 MiB and the 12 MiB tail are free beside live y: 16 MiB in 2
// blocks that only y's free gives back. 4 MiB − 100 + 100 + 16 MiB = 20 MiB.
std::unique_ptr<Allocator> TorchTwoTensorsOneFreed() {
  auto a = MakeTorch();
  const AllocResult x = AllocBytes(*a, 1, 4 * kMiB);
  AllocBytes(*a, 2, 4 * kMiB - 100);
  a->Free(x.handle);
  return a;
}

// The same with y freed too: the three blocks merge into the whole 20 MiB
// segment, which empty_cache() would release.
std::unique_ptr<Allocator> TorchBothFreed() {
  auto a = MakeTorch();
  const AllocResult x = AllocBytes(*a, 1, 4 * kMiB);
  const AllocResult y = AllocBytes(*a, 2, 4 * kMiB - 100);
  a->Free(x.handle);
  a->Free(y.handle);
  return a;
}

// 1000 B rounds to 1024 (rounding 24) in a 2 MiB small-pool segment, split
// (2 MiB − 1024 >= 512): the rest is inactive_split of the small pool.
std::unique_ptr<Allocator> TorchSmallTensor() {
  auto a = MakeTorch();
  AllocBytes(*a, 1, 1000);
  return a;
}

// Freed, the 1024 B merges back: the whole 2 MiB small segment is free.
std::unique_ptr<Allocator> TorchSmallTensorFreed() {
  auto a = MakeTorch();
  const AllocResult x = AllocBytes(*a, 1, 1000);
  a->Free(x.handle);
  return a;
}

// Pools are per stream: 1000 B on stream 3 splits a small segment of stream
// 3's own pool; 4 MiB on stream 7 made a 20 MiB segment of stream 7's large
// pool, whole again once freed. 1000 + 24 + (2 MiB − 1024) + 20 MiB.
std::unique_ptr<Allocator> TorchOtherStreamsPools() {
  auto a = MakeTorch();
  AllocBytes(*a, 1, 1000, /*stream=*/3);
  const AllocResult s = AllocBytes(*a, 2, 4 * kMiB, /*stream=*/7);
  a->Free(s.handle);
  return a;
}

// free_requested without free_completed: the 4 MiB block is pending (the
// stream may still use it), not cached; the 16 MiB split off stays free.
std::unique_ptr<Allocator> TorchPendingFree() {
  auto a = MakeTorch();
  const AllocResult x = AllocBytes(*a, 1, 4 * kMiB);
  a->RequestFree(x.handle);
  return a;
}

// max_split_size = 100 MiB: 100 MiB (>= 10 MiB: a segment of exactly 100 MiB,
// not split since the request is not below max_split_size) is at the limit,
// so freed it is oversize; 30 MiB made its own 30 MiB segment (the first in use
// then), below the limit: an ordinary free segment.
std::unique_ptr<Allocator> TorchOversizeSegment() {
  torch::TorchOptions o;
  o.max_split_size = Bytes(100 * kMiB);
  auto a = MakeTorch(o);
  const AllocResult big = AllocBytes(*a, 1, 100 * kMiB);
  const AllocResult small = AllocBytes(*a, 2, 30 * kMiB);
  a->Free(big.handle);
  a->Free(small.handle);
  return a;
}

// Expandable segments map large-pool pages of 20 MiB: 3 MiB maps one, the
// other 17 MiB are mapped but free; the range's unmapped rest is not reserved.
// They share their page with the live 3 MiB, so empty_cache(), which unmaps
// only whole pages, would keep them: a partial page.
std::unique_ptr<Allocator> TorchExpandableLarge() {
  auto a = MakeTorch(Expandable());
  AllocBytes(*a, 1, 3 * kMiB);
  return a;
}

// ...and small-pool pages of 2 MiB: 1000 B (1024 rounded) maps one page.
std::unique_ptr<Allocator> TorchExpandableSmall() {
  auto a = MakeTorch(Expandable());
  AllocBytes(*a, 1, 1000);
  return a;
}

// Three 20 MiB tensors fill pages 0, 1 and 2 exactly; freed, the middle one
// is a free block of one whole page, which empty_cache() would unmap.
// 40 MiB requested + 20 MiB expandable_free = 60 MiB mapped.
std::unique_ptr<Allocator> TorchExpandableWholePage() {
  auto a = MakeTorch(Expandable());
  AllocBytes(*a, 1, 20 * kMiB);
  const AllocResult b = AllocBytes(*a, 2, 20 * kMiB);
  AllocBytes(*a, 3, 20 * kMiB);
  a->Free(b.handle);
  return a;
}

// Mixed pages: x = 3 MiB maps page 0 and takes [0, 3); y = 40 MiB takes the
// free [3, 20) and maps pages 1–2, [3, 43); z = 3 MiB best-fits the free
// [43, 60), taking [43, 46). With y freed, the free block [3, 43) holds page 1
// whole (20 MiB, which empty_cache() unmaps) between 17 MiB of page 0 (shared
// with x) and 3 MiB of page 2 (shared with z); [46, 60) shares page 2 with z.
// 6 MiB requested + 20 MiB whole + (17 + 3 + 14) MiB partial = 60 MiB; the
// mixed block counts once in each part, so partial_page has 2 blocks.
std::unique_ptr<Allocator> TorchExpandableMixedPages() {
  auto a = MakeTorch(Expandable());
  AllocBytes(*a, 1, 3 * kMiB);
  const AllocResult y = AllocBytes(*a, 2, 40 * kMiB);
  AllocBytes(*a, 3, 3 * kMiB);
  a->Free(y.handle);
  return a;
}

}  // namespace

std::vector<WorkedCase> TorchWorkedCases() {
  const std::string large = "large pool";
  return {
      {"RoundingAndInactiveSplitLargePool", "torch", "inactive_split", large, TorchTwoTensorsOneFreed,
       fmt::format("requested={}; rounding=100/1; inactive_split[large pool]={}/2", 4 * kMiB - 100,
                   16 * kMiB)},
      {"FreeSegmentLargePool", "torch", "free_segment", large, TorchBothFreed,
       fmt::format("requested=0; free_segment[large pool]={}/1", 20 * kMiB)},
      {"InactiveSplitSmallPool", "torch", "inactive_split", "small pool", TorchSmallTensor,
       fmt::format("requested=1000; rounding=24/1; inactive_split[small pool]={}/1", 2 * kMiB - 1024)},
      {"FreeSegmentSmallPool", "torch", "free_segment", "small pool", TorchSmallTensorFreed,
       fmt::format("requested=0; free_segment[small pool]={}/1", 2 * kMiB)},
      {"PoolsOfOtherStreams", "torch", "free_segment", "large pool, stream 7", TorchOtherStreamsPools,
       fmt::format("requested=1000; rounding=24/1; free_segment[large pool, stream 7]={}/1; "
                   "inactive_split[small pool, stream 3]={}/1",
                   20 * kMiB, 2 * kMiB - 1024)},
      {"PendingFree", "torch", "pending_free", "", TorchPendingFree,
       fmt::format("requested=0; inactive_split[large pool]={}/1; pending_free={}/1", 16 * kMiB, 4 * kMiB)},
      {"OversizeSegmentAtMaxSplitSize", "torch", "oversize_segment", large, TorchOversizeSegment,
       fmt::format("requested=0; oversize_segment[large pool]={}/1; free_segment[large pool]={}/1",
                   100 * kMiB, 30 * kMiB)},
      {"ExpandablePartialPageLargePool", "torch", "expandable_partial_page", large, TorchExpandableLarge,
       fmt::format("requested={}; rounding=0/1; expandable_partial_page[large pool]={}/1", 3 * kMiB, 17 * kMiB)},
      {"ExpandablePartialPageSmallPool", "torch", "expandable_partial_page", "small pool", TorchExpandableSmall,
       fmt::format("requested=1000; rounding=24/1; expandable_partial_page[small pool]={}/1", 2 * kMiB - 1024)},
      {"ExpandableFreeWholePage", "torch", "expandable_free", large, TorchExpandableWholePage,
       fmt::format("requested={}; rounding=0/2; expandable_free[large pool]={}/1", 40 * kMiB, 20 * kMiB)},
      {"ExpandableMixedPages", "torch", "expandable_free", large, TorchExpandableMixedPages,
       fmt::format("requested={}; rounding=0/2; expandable_partial_page[large pool]={}/2; "
                   "expandable_free[large pool]={}/1",
                   6 * kMiB, 34 * kMiB, 20 * kMiB)},
  };
}

// The mixed block of TorchExpandableMixedPages, run by run in address order
// (what the explainer splits by who freed them), and as the largest cached
// block: its cause the partial page, its whole page the inner cause.
TEST(ReservedPartsTorchTest, MixedExpandableBlockIsThreeRunsAndOneCachedBlock) {
  const std::unique_ptr<Allocator> a = TorchExpandableMixedPages();
  // Offsets in MiB from the mixed block, at 3 MiB; "+" the run's size, "/" its block's offset.
  std::vector<std::string> runs;
  std::optional<Offset> first;
  const ReservedWalk w = WalkReserved(*a, 1, nullptr, [&](const FreePiece& p) {
    if (!first) first = p.block;
    runs.push_back(fmt::format("{}+{}/{} {}[{}]", (p.offset - *first).value() / kMiB, p.size.value() / kMiB,
                               (p.block - *first).value() / kMiB, p.cause, p.key));
  });
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0], "0+17/0 expandable_partial_page[large pool]");
  EXPECT_EQ(runs[1], "17+20/0 expandable_free[large pool]");
  EXPECT_EQ(runs[2], "37+3/0 expandable_partial_page[large pool]");
  EXPECT_EQ(runs[3], "43+14/43 expandable_partial_page[large pool]");
  ASSERT_EQ(w.largest_free.size(), 1u);
  const CachedBlock& c = w.largest_free[0];
  EXPECT_EQ(c.size, Bytes(40 * kMiB));
  EXPECT_EQ(c.cause, "expandable_partial_page");
  EXPECT_EQ(c.inner_cause, "expandable_free");
  EXPECT_EQ(c.inner_offset - c.offset, Bytes(17 * kMiB));
  EXPECT_EQ(c.inner_size, Bytes(20 * kMiB));
}

}  // namespace hbmsim::testing
