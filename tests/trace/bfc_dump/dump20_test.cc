// shared/bfc_dumps/20.txt is complete: the heap must rebuild exactly, every
// consistency check must pass, and the numbers of the README must come out.
#include "gtest/gtest.h"
#include "test_util.h"
#include "trace/bfc_dump/diagnosis.h"

namespace hbmsim::trace::bfc_dump {
namespace {

class Dump20Test : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = LoadSharedDump("20.txt");
    ASSERT_EQ(log_.dumps.size(), 1u);
  }
  const BfcDump& dump() const { return log_.dumps[0]; }
  BfcLog log_;
};

TEST_F(Dump20Test, ParsesEveryPart) {
  EXPECT_EQ(log_.lines, 480);
  EXPECT_EQ(log_.unmatched_lines, 0);
  ASSERT_EQ(log_.devices.size(), 1u);  // "Created device ... with 3340 MB memory"
  EXPECT_EQ(log_.devices[0].mib, 3340u);
  EXPECT_EQ(log_.devices[0].device, "GPU:0");
  ASSERT_EQ(log_.not_a_failure.size(), 1u);
  EXPECT_EQ(log_.not_a_failure[0].request.text, "902.00MiB");
  const BfcDump& d = dump();
  EXPECT_EQ(d.header->request.text, "585.94MiB");
  EXPECT_EQ(d.header->rounded, 614400000u);
  EXPECT_EQ(d.header->op, "_EagerConst");
  EXPECT_EQ(d.allocator, "GPU_0_bfc");
  ASSERT_EQ(d.bins.size(), 21u);
  EXPECT_EQ(d.bins[0].total_chunks, 200u);
  EXPECT_EQ(d.bins[0].chunks_in_use, 197u);
  EXPECT_EQ(d.bins[20].total_chunks, 7u);
  EXPECT_EQ(d.bins[20].allocated->text, "2.75GiB");
  ASSERT_EQ(d.bin_for.size(), 1u);
  EXPECT_EQ(d.bin_for[0].rounded.text, "585.94MiB");
  ASSERT_EQ(d.bin_for[0].chunks.size(), 6u);
  EXPECT_EQ(d.bin_for[0].chunks[0].chunk.size.text, "274.42MiB");
  EXPECT_EQ(d.bin_for[0].chunks[0].next->requested.text, "4B");
  EXPECT_EQ(d.bin_for[0].chunks[5].chunk.size.text, "532.88MiB");
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].size, 3502964736u);
  EXPECT_EQ(d.ChunkCount(), 383u);
  EXPECT_EQ(d.regions[0].chunks[0].addr, 0x7f1c8a000000u);
  EXPECT_EQ(d.regions[0].chunks[3].next, 40011u);
  EXPECT_EQ(d.regions[0].chunks.back().size, 230179072u);
  EXPECT_EQ(d.summary.size(), 35u);
  EXPECT_EQ(d.sum_total->text, "561.92MiB");
  EXPECT_EQ(d.pool->pool_bytes, 3502964736u);
  EXPECT_EQ(d.pool->curr_region_allocation_bytes, 7005929472u);
  EXPECT_FALSE(d.pool->legacy_name);
  EXPECT_EQ(d.stats.lines, 8);
  EXPECT_EQ(d.stats.limit, 3502964736u);
  EXPECT_EQ(d.stats.in_use, 589212672u);
  EXPECT_EQ(d.stats.max_in_use, 3288551168u);
  EXPECT_EQ(d.stats.num_allocs, 469363u);
  EXPECT_EQ(d.stats.max_alloc_size, 1228800000u);
  EXPECT_EQ(d.stats.reserved, 0u);
  EXPECT_EQ(d.stats.peak_reserved, 0u);
  EXPECT_EQ(d.stats.largest_free_block, 0u);
  EXPECT_EQ(d.occupancy->size(), 100u);
  EXPECT_EQ(d.gaps, 0);
}

TEST_F(Dump20Test, RebuildsTheHeapExactly) {
  EXPECT_TRUE(ChunkListGaps(dump()).empty());
  const Heap heap = RebuildHeap(dump());
  EXPECT_EQ(heap.regions, 1u);
  EXPECT_EQ(heap.chunks, 383u);
  EXPECT_EQ(heap.in_use_chunks, 343u);
  EXPECT_EQ(heap.free_chunks, 40u);
  EXPECT_EQ(heap.pool_bytes, 3502964736u);
  EXPECT_EQ(heap.in_use_bytes, 589212672u);
  EXPECT_EQ(heap.free_bytes, 2913752064u);
  EXPECT_EQ(heap.largest_free, 558759936u);
  EXPECT_EQ(heap.tail_free, 230179072u);
  EXPECT_EQ(heap.free_pages_2mib, 1372u);
  const std::vector<Check> checks = CheckConsistency(dump(), heap);
  std::vector<std::string> names;
  for (const Check& c : checks) {
    names.push_back(c.name);
    EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"contiguity", "region ends", "pool", "sum total", "in use",
                                             "bins", "summary", "chunk state"}));
}

TEST_F(Dump20Test, IsAFragmentationOom) {
  const Diagnosis d = Diagnose(dump());
  EXPECT_TRUE(d.heap_rebuilt);
  EXPECT_EQ(d.rounded, 614400000u);
  EXPECT_FALSE(d.rounded_is_estimate);
  EXPECT_EQ(d.verdict, Verdict::kFragmentation);
  EXPECT_EQ(d.verdict_basis,
            "rounded request 614400000 <= free 2913752064 + unallocated 0, but the largest free chunk is "
            "558759936");
  EXPECT_EQ(d.free_bytes, 2913752064u);
  EXPECT_EQ(d.largest_free, 558759936u);
  EXPECT_EQ(d.available, 0u);
  EXPECT_EQ(d.limit, 3502964736u);
  EXPECT_TRUE(d.missing.empty());
  ASSERT_EQ(d.free_histogram.size(), 15u);
  EXPECT_EQ(d.free_histogram[0].bin_size, 256u);
  EXPECT_EQ(d.free_histogram[0].count, 3u);
  EXPECT_EQ(d.free_histogram[0].bytes, 768u);
  EXPECT_EQ(d.free_histogram[13].bin_size, 134217728u);
  EXPECT_EQ(d.free_histogram[13].bytes, 401096960u);
  EXPECT_EQ(d.free_histogram[14].bin_size, 268435456u);
  EXPECT_EQ(d.free_histogram[14].count, 6u);
  EXPECT_EQ(d.free_histogram[14].bytes, 2464071424u);
}

TEST_F(Dump20Test, WhatIfs) {
  const WhatIf w = Diagnose(dump()).what_if;
  EXPECT_EQ(w.fits_after_defrag, true);
  EXPECT_EQ(w.pages_needed, 293u);  // ceil(614400000 / 2 MiB)
  EXPECT_EQ(w.free_pages_2mib, 1372u);
  EXPECT_EQ(w.available_pages_2mib, 0u);
  EXPECT_EQ(w.fits_paged, true);
  EXPECT_EQ(w.more_limit_bytes, 614400000u);
  EXPECT_EQ(w.more_limit_bytes_coalescing, 614400000u - 230179072u);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
