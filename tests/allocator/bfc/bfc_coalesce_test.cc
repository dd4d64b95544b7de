// Freeing and coalescing (REF §1.5) and handle recycling (§1.6): what the
// `next H` numbers and the stale "Requested Size" of a TF dump would show.
//
// Every test starts from four 256-byte chunks in a 1 MiB region:
//   [A h0 @0][B h1 @256][C h2 @512][D h3 @768][tail h4 @1024, 1047552 free]
// requested 200, 201, 202, 203 bytes so stale values are recognisable.
#include <limits>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

class BfcCoalesceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(Alloc(a_, i + 1, 200 + i).handle, Handle(i));
    ASSERT_EQ(Map(a_),
              "[0+1048576] U0+256 h0>1, U256+256 h1>2, U512+256 h2>3, U768+256 h3>4, F1024+1047552 h4>-");
  }
  BfcAllocator a_{Limit(kMiB)};
};

TEST_F(BfcCoalesceTest, FreeBetweenInUseNeighboursStaysAlone) {
  a_.Free(Handle(2));
  EXPECT_EQ(Map(a_),
            "[0+1048576] U0+256 h0>1, U256+256 h1>2, F512+256 h2>3, U768+256 h3>4, F1024+1047552 h4>-");
  EXPECT_EQ(a_.GetStats().bytes_in_use, 3 * 256);
  EXPECT_INVARIANTS(a_);
}

TEST_F(BfcCoalesceTest, MergesTheFreeNextNeighbourIntoTheFreedChunk) {
  a_.Free(Handle(2));  // C alone
  a_.Free(Handle(1));  // B absorbs C; handle 2 is released
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, F256+512 h1>3, U768+256 h3>4, F1024+1047552 h4>-");
  EXPECT_INVARIANTS(a_);
}

TEST_F(BfcCoalesceTest, MergesTheFreedChunkIntoTheFreePreviousNeighbour) {
  a_.Free(Handle(1));  // B alone
  a_.Free(Handle(2));  // C is absorbed by B; handle 2 is released
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, F256+512 h1>3, U768+256 h3>4, F1024+1047552 h4>-");
  EXPECT_INVARIANTS(a_);
}

TEST_F(BfcCoalesceTest, MergesBothSidesAndRecyclesHandlesLifo) {
  a_.Free(Handle(1));  // B alone
  a_.Free(Handle(3));  // D absorbs the tail: releases h4
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, F256+256 h1>2, U512+256 h2>3, F768+1047808 h3>-");
  // C: next (h3) merges into C first, releasing h3; then C merges into B,
  // releasing h2. The released stack is now h2, h3, h4 (top first).
  a_.Free(Handle(2));
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, F256+1048320 h1>-");
  EXPECT_EQ(a_.chunk_records(), 5u);
  EXPECT_INVARIANTS(a_);

  // Each split pops the top of the stack for its remainder: h2, then h3, then h4.
  EXPECT_EQ(Alloc(a_, 5, 100).handle, Handle(1));
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, U256+256 h1>2, F512+1048064 h2>-");
  EXPECT_EQ(Alloc(a_, 6, 100).handle, Handle(2));
  EXPECT_EQ(Map(a_), "[0+1048576] U0+256 h0>1, U256+256 h1>2, U512+256 h2>3, F768+1047808 h3>-");
  EXPECT_EQ(Alloc(a_, 7, 100).handle, Handle(3));
  EXPECT_EQ(Map(a_),
            "[0+1048576] U0+256 h0>1, U256+256 h1>2, U512+256 h2>3, U768+256 h3>4, F1024+1047552 h4>-");
  // The stack is empty again: the next split appends record 5.
  EXPECT_EQ(Alloc(a_, 8, 100).handle, Handle(4));
  EXPECT_EQ(Blocks(a_).back().handle, 5u);
  EXPECT_EQ(a_.chunk_records(), 6u);
  EXPECT_INVARIANTS(a_);
}

TEST_F(BfcCoalesceTest, FreeChunksKeepStaleRequestedSizes) {
  a_.Free(Handle(1));
  a_.Free(Handle(3));
  a_.Free(Handle(2));
  // The merged free chunk h1 still shows B's request (201), as TF dumps do.
  std::vector<BlockInfo> blocks = Blocks(a_);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[1].requested, Bytes(201));
  EXPECT_EQ(blocks[1].state, BlockState::kFree);
  EXPECT_EQ(blocks[1].id, 0u);
  // A split recycles h2, whose record last described C (202): the new free
  // remainder inherits that stale value, as REF's AllocateChunk leaves it.
  Alloc(a_, 9, 100, /*stream=*/7);
  blocks = Blocks(a_);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[1].requested, Bytes(100));
  EXPECT_EQ(blocks[1].id, 9u);
  EXPECT_EQ(blocks[1].stream, 7u);
  EXPECT_EQ(blocks[2].handle, 2u);
  EXPECT_EQ(blocks[2].requested, Bytes(202));
  EXPECT_EQ(blocks[2].next_handle, std::numeric_limits<uint64_t>::max());  // dumps: 18446744073709551615
}

TEST_F(BfcCoalesceTest, StatsFollowChunkSizes) {
  a_.Free(Handle(0));
  const AllocatorStats s = a_.GetStats();
  EXPECT_EQ(s.num_allocs, 4);
  EXPECT_EQ(s.bytes_in_use, 768);
  EXPECT_EQ(s.peak_bytes_in_use, 1024);
  EXPECT_EQ(s.largest_alloc_size, 256);
  EXPECT_EQ(s.bytes_limit, std::optional<int64_t>(kMiB));
  EXPECT_EQ(s.bytes_reserved, 0);
  EXPECT_EQ(s.peak_bytes_reserved, 0);
  EXPECT_EQ(s.pool_bytes, std::optional<int64_t>(kMiB));
  EXPECT_EQ(s.peak_pool_bytes, std::optional<int64_t>(kMiB));
  EXPECT_EQ(s.largest_free_block_bytes, 1047552);  // the tail; nothing left to Extend
}

TEST_F(BfcCoalesceTest, FreeOfTheNullHandleOrAFreedHandleChangesNothing) {
  a_.Free(Handle(1));
  const std::string before = Map(a_);
  a_.Free(kNullHandle);
#ifdef HBMSIM_DCHECKS
  // The sanitizer build stops at the caller's bug (allocator/core/dcheck.h).
  EXPECT_DEATH(a_.Free(Handle(1)), "HBMSIM_DCHECK.*not a live bfc chunk");
  EXPECT_DEATH(a_.Free(Handle(99)), "HBMSIM_DCHECK.*not a live bfc chunk");
#else
  a_.Free(Handle(1));   // already free
  a_.Free(Handle(99));  // never issued
#endif
  EXPECT_EQ(Map(a_), before);
  EXPECT_EQ(a_.GetStats().bytes_in_use, 768);
  EXPECT_INVARIANTS(a_);
}

}  // namespace
}  // namespace hbmsim::testing
