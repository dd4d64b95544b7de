// Reserved, explained, worked by hand for each cause each policy names
// (allocator/core/reserved_parts.h): every layout below is small enough to
// add up on paper, and each test checks the parts and that they sum to the
// policy's own reserved counter.
#include <string>

#include "allocator/baselines/fit_allocator.h"
#include "allocator/bfc/bfc_allocator.h"
#include "allocator/core/reserved_parts.h"
#include "allocator/torch/torch_allocator.h"
#include "allocator/tpu/tpu_allocator.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace hbmsim {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;

AllocResult Alloc(Allocator& a, uint64_t id, uint64_t bytes, uint64_t stream = 0) {
  AllocRequest req;
  req.id = BufferId(id);
  req.bytes = Bytes(bytes);
  req.stream = StreamId(stream);
  req.event = EventIndex(id);
  return a.Allocate(req);
}

// "requested=N; cause[key]=bytes/blocks; ..." in the walk's order, after
// checking that the parts add up to the policy's own reserved bytes.
std::string Parts(const Allocator& a) {
  const ReservedWalk w = WalkReserved(a, 3);
  Bytes sum = w.requested;
  std::string out = fmt::format("requested={}", w.requested.value());
  for (const ReservedPart& p : w.parts) {
    sum += p.bytes;
    out += fmt::format("; {}{}={}/{}", p.cause, p.key.empty() ? "" : fmt::format("[{}]", p.key), p.bytes.value(),
                       p.blocks);
  }
  EXPECT_EQ(sum, w.reserved) << out;
  EXPECT_EQ(w.reserved, a.ReservedBytes()) << out;
  return out;
}

// Two 4 MiB tensors share one 20 MiB segment (kLargeBuffer); freeing the first
// leaves it and the tail as inactive_split, which only freeing the second returns.
TEST(ReservedPartsTest, TorchSplitSegmentThenWholeFreeSegment) {
  torch::TorchAllocator a{torch::TorchOptions{}};
  const AllocResult x = Alloc(a, 1, 4 * kMiB);
  const AllocResult y = Alloc(a, 2, 4 * kMiB - 100);  // rounded up to a multiple of 512 B: 4 MiB
  a.Free(x.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested={}; rounding=100/1; inactive_split[large pool]={}/2", 4 * kMiB - 100,
                                  16 * kMiB));
  a.Free(y.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=0; free_segment[large pool]={}/1", 20 * kMiB));
}

// 1000 B rounds to 1024 in a 2 MiB small-pool segment; a stream's own pool says so.
TEST(ReservedPartsTest, TorchSmallPoolAndAnotherStreamsPool) {
  torch::TorchAllocator a{torch::TorchOptions{}};
  ASSERT_TRUE(Alloc(a, 1, 1000).ok());
  const AllocResult s = Alloc(a, 2, 4 * kMiB, /*stream=*/7);
  a.Free(s.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=1000; rounding=24/1; free_segment[large pool, stream 7]={}/1; "
                                  "inactive_split[small pool]={}/1",
                                  20 * kMiB, 2 * kMiB - 1024));
}

// At or above max_split_size a segment is never split: freed, it is kept whole.
TEST(ReservedPartsTest, TorchOversizeSegmentKeptByMaxSplitSize) {
  torch::TorchOptions o;
  o.max_split_size = Bytes(64 * kMiB);
  torch::TorchAllocator a(o);
  const AllocResult x = Alloc(a, 1, 100 * kMiB);
  a.Free(x.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=0; oversize_segment[large pool]={}/1", 100 * kMiB));
}

// An expandable segment maps a 20 MiB page for 3 MiB: the other 17 MiB are
// mapped but free; the unmapped rest of the range is not reserved.
TEST(ReservedPartsTest, TorchExpandableMappedButFreePages) {
  torch::TorchOptions o;
  o.expandable_segments = true;
  o.capacity = Bytes(1024 * kMiB);
  torch::TorchAllocator a(o);
  ASSERT_TRUE(Alloc(a, 1, 3 * kMiB).ok());
  EXPECT_EQ(Parts(a), fmt::format("requested={}; rounding=0/1; expandable_free[large pool]={}/1", 3 * kMiB,
                                  17 * kMiB));
}

// BFC without growth holds the whole limit: 500 B rounds to 512, the freed
// 256 B chunk waits in bin 0, and the rest is region 0's tail.
TEST(ReservedPartsTest, BfcFreeChunkByBinAndRegionTail) {
  BfcOptions o;
  o.memory_limit = Bytes(1 * kMiB);
  BfcAllocator a(o);
  const AllocResult x = Alloc(a, 1, 256);
  ASSERT_TRUE(Alloc(a, 2, 500).ok());
  a.Free(x.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=500; rounding=12/1; region_tail[region 0]={}/1; free_chunk[bin 0]=256/1",
                                  kMiB - 768));
}

// A TPU: buffers from the top, programs from the bottom, the open space
// between; a freed buffer between two others is a gap; a requested free not
// completed is queued; 1000 B is padded to the 512 B granule.
TEST(ReservedPartsTest, TpuPaddingProgramsQueuedFreesGapsAndOpenSpace) {
  TpuOptions o;
  o.hbm_bytes = Bytes(10 * kMiB);
  TpuAllocator a(o);
  const AllocResult top = Alloc(a, 1, kMiB);
  const AllocResult middle = Alloc(a, 2, kMiB);
  const AllocResult low = Alloc(a, 3, 1000);
  ASSERT_TRUE(top.ok() && middle.ok() && low.ok());
  ASSERT_TRUE(a.LoadProgram(ProgramId(9), Bytes(2 * kMiB), EventIndex(4)).ok);
  a.Free(middle.handle);
  a.RequestFree(top.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=1000; padding=24/1; open_space={}/1; program_reservation={}/1; "
                                  "gap={}/1; queued_free={}/1",
                                  10 * kMiB - 4 * kMiB - 1024, 2 * kMiB, kMiB, kMiB));
}

// A policy with no terms of its own: the generic rounding and cached_free.
TEST(ReservedPartsTest, BaselineGenericCauses) {
  FitOptions o;
  o.memory_limit = Bytes(64 * kKiB);
  FitAllocator a(o);
  const AllocResult x = Alloc(a, 1, 1000);
  ASSERT_TRUE(Alloc(a, 2, 3000).ok());  // 3072 with the 256 B alignment
  a.Free(x.handle);
  EXPECT_EQ(Parts(a), fmt::format("requested=3000; rounding=72/1; cached_free={}/2", 64 * kKiB - 3072));
}

}  // namespace
}  // namespace hbmsim
