// Every real dump in shared/bfc_dumps (20 has its own file): the numbers each
// one holds, read off the file by hand, and what the diagnosis can say.
#include "gtest/gtest.h"
#include "test_util.h"
#include "trace/bfc_dump/diagnosis.h"

namespace hbmsim::trace::bfc_dump {
namespace {

void ExpectBin(const BinLine& b, uint64_t size, uint64_t total, uint64_t in_use, std::string_view allocated) {
  EXPECT_EQ(b.bin_size, size);
  EXPECT_EQ(b.total_chunks, total);
  EXPECT_EQ(b.chunks_in_use, in_use);
  ASSERT_TRUE(b.allocated.has_value()) << "Bin (" << size << ")";
  EXPECT_EQ(b.allocated->text, allocated);
}

TEST(SharedDumpsTest, Dump01Tf24HeaderBinsChunksSummary) {
  const BfcLog log = LoadSharedDump("01.txt");
  EXPECT_EQ(log.lines, 37);
  EXPECT_EQ(log.unmatched_lines, 0);
  ASSERT_EQ(log.devices.size(), 1u);  // "Created TensorFlow device ... with 67 MB memory"
  EXPECT_EQ(log.devices[0].line, 8);
  EXPECT_EQ(log.truncated_lines, 3);
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  EXPECT_EQ(d.header->form, HeaderForm::kRequestedByOp);
  EXPECT_EQ(d.header->request.text, "18.00MiB");
  EXPECT_EQ(d.header->rounded, 18874368u);
  EXPECT_EQ(d.header->op, "Mul");
  EXPECT_EQ(d.allocator, "GPU_0_bfc");
  EXPECT_TRUE(d.has_title);
  ASSERT_EQ(d.bins.size(), 2u);
  ExpectBin(d.bins[0], 256, 64, 64, "16.0KiB");
  EXPECT_EQ(d.bins[0].requested_in_use->text, "14.0KiB");
  ExpectBin(d.bins[1], 512, 84, 84, "42.0KiB");
  EXPECT_FALSE(d.bins[1].in_use.has_value());  // cut at "in use in bin[...]"
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].size, 1048576u);
  ASSERT_EQ(d.regions[0].chunks.size(), 8u);
  EXPECT_EQ(d.regions[0].chunks[0].addr, 0xf00950000u);
  EXPECT_EQ(d.regions[0].chunks[0].size, 1280u);
  EXPECT_EQ(d.regions[0].chunks[7].addr, 0xf00950b00u);
  EXPECT_EQ(d.regions[0].chunks[7].next, 13u);
  ASSERT_EQ(d.summary.size(), 9u);
  EXPECT_EQ(d.summary[0].count, 84u);
  EXPECT_EQ(d.summary[0].size, 512u);
  EXPECT_EQ(d.summary[8].size, 24576u);
  EXPECT_TRUE(d.chunk_list_interrupted);
  const Diagnosis diag = Diagnose(d);
  EXPECT_FALSE(diag.heap_rebuilt);
  EXPECT_EQ(diag.verdict, Verdict::kUnknown);
  EXPECT_EQ(diag.rounded, 18874368u);
}

TEST(SharedDumpsTest, Dump03IsTwoUsersLogs) {
  const BfcLog log = LoadSharedDump("03.txt");
  ASSERT_EQ(log.dumps.size(), 2u);
  const BfcDump& a = log.dumps[0];
  EXPECT_FALSE(a.header.has_value());
  EXPECT_EQ(a.allocator, "GPU_0_bfc");
  ASSERT_EQ(a.bins.size(), 1u);
  ExpectBin(a.bins[0], 256, 0, 0, "0B");
  const BfcDump& b = log.dumps[1];
  ASSERT_EQ(b.regions.size(), 1u);
  EXPECT_FALSE(b.regions[0].size.has_value());
  ASSERT_EQ(b.ChunkCount(), 7u);
  EXPECT_EQ(b.regions[0].chunks[0].addr, 0x7f11262c6500u);
  EXPECT_EQ(b.regions[0].chunks[0].next, 115u);
  EXPECT_EQ(b.regions[0].chunks[6].size, 2620160u);
  EXPECT_EQ(b.regions[0].chunks[6].next, kNoNextChunk);
  ASSERT_EQ(b.summary.size(), 2u);
  EXPECT_EQ(b.summary[1].count, 10u);
  EXPECT_EQ(b.summary[1].total.text, "5.0KiB");
}

TEST(SharedDumpsTest, Dump04Tf1ChunkRun) {
  const BfcLog log = LoadSharedDump("04.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const Region& r = log.dumps[0].regions.at(0);
  ASSERT_EQ(r.chunks.size(), 11u);
  uint64_t free_bytes = 0, in_use = 0;
  for (const Chunk& c : r.chunks) {
    EXPECT_EQ(c.layout, ChunkLayout::kTf1);
    (c.in_use ? in_use : free_bytes) += c.size;
  }
  EXPECT_EQ(free_bytes, 917504u + 139264u + 819200u);
  EXPECT_EQ(in_use, 81920u + 458752u * 2 + 67108864u * 2 + 8388608u * 2 + 4194304u);
  EXPECT_EQ(r.chunks[0].addr, 0x7f94a939ca00u);
  EXPECT_FALSE(r.chunks[0].in_use);
  EXPECT_EQ(ChunkListGaps(log.dumps[0]).size(), 2u);  // cut off, and no bins to count against
}

TEST(SharedDumpsTest, Dump05TopBinAndTf1ChunkState) {
  const BfcLog log = LoadSharedDump("05.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  ASSERT_EQ(d.bins.size(), 1u);
  ExpectBin(d.bins[0], 268435456, 2, 1, "14.59GiB");
  EXPECT_EQ(d.bins[0].in_use->text, "8.49GiB");
  ASSERT_EQ(d.bin_for.size(), 1u);
  EXPECT_EQ(d.bin_for[0].rounded.text, "8.49GiB");
  EXPECT_EQ(d.bin_for[0].bin_size.text, "256.00MiB");
  ASSERT_EQ(d.bin_for[0].chunks.size(), 1u);
  const ChunkStateLine& s = d.bin_for[0].chunks[0];
  EXPECT_EQ(s.chunk.size.text, "6.09GiB");
  EXPECT_EQ(s.chunk.requested.text, "781.2KiB");
  EXPECT_FALSE(s.chunk.bin_num.has_value());
  EXPECT_EQ(s.prev->size.text, "144.96MiB");
  EXPECT_TRUE(s.prev->in_use);
  EXPECT_FALSE(s.next.has_value());
  ASSERT_EQ(d.ChunkCount(), 5u);
  EXPECT_EQ(d.regions[0].chunks[1].addr, 0x10216400500u);
  EXPECT_EQ(d.regions[0].chunks[1].size, 9120000000u);
  const Diagnosis diag = Diagnose(d);
  // The request comes from "Bin for 8.49GiB" (seen_figures_test.cc).
  EXPECT_EQ(diag.verdict_basis, "the dump does not show the free bytes in the pool, the unallocated limit");
}

TEST(SharedDumpsTest, Dump06BinsAndSummary) {
  const BfcLog log = LoadSharedDump("06.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  ASSERT_EQ(d.bins.size(), 6u);
  ExpectBin(d.bins[0], 4194304, 0, 0, "0B");
  ExpectBin(d.bins[1], 8388608, 2, 2, "24.57MiB");
  ExpectBin(d.bins[5], 134217728, 0, 0, "0B");
  ASSERT_EQ(d.summary.size(), 10u);
  EXPECT_EQ(d.summary[1].count, 312u);
  EXPECT_EQ(d.summary[1].size, 7680u);
  EXPECT_EQ(d.summary[1].total.text, "2.29MiB");
  EXPECT_EQ(d.summary[9].size, 14592u);
}

TEST(SharedDumpsTest, Dump07UnstampedSummary) {
  const BfcLog log = LoadSharedDump("07.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  EXPECT_TRUE(d.has_summary_title);
  ASSERT_EQ(d.summary.size(), 12u);
  EXPECT_EQ(d.summary[0].count, 22u);
  EXPECT_EQ(d.summary[3].count, 7499u);
  EXPECT_EQ(d.summary[3].total.text, "14.65MiB");
  EXPECT_EQ(d.summary[11].count, 303u);
  EXPECT_EQ(d.summary[11].size, 14336u);
}

TEST(SharedDumpsTest, Dump08OldestBinForm) {
  const BfcLog log = LoadSharedDump("08.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  ASSERT_EQ(d.bins.size(), 6u);
  for (const BinLine& b : d.bins) EXPECT_TRUE(b.oldest_form);
  ExpectBin(d.bins[0], 4096, 0, 0, "0B");
  ExpectBin(d.bins[5], 131072, 1, 0, "130.0KiB");
  EXPECT_EQ(d.bins[5].in_use->text, "0B");
  EXPECT_FALSE(d.bins[5].requested_in_use.has_value());
}

TEST(SharedDumpsTest, Dump09Tf1Header) {
  const BfcLog log = LoadSharedDump("09.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  EXPECT_EQ(d.header->form, HeaderForm::kTf1);
  EXPECT_EQ(d.header->request.text, "84.50MiB");
  EXPECT_FALSE(d.header->rounded.has_value());
  ASSERT_EQ(d.bins.size(), 5u);
  ExpectBin(d.bins[0], 256, 94, 94, "23.5KiB");
  ExpectBin(d.bins[1], 512, 19, 18, "9.5KiB");
  ExpectBin(d.bins[4], 4096, 35, 35, "140.0KiB");
  const Diagnosis diag = Diagnose(d);
  EXPECT_EQ(diag.rounded, 88604672u);  // 84.50 MiB, already a multiple of 256
  EXPECT_TRUE(diag.rounded_is_estimate);
}

TEST(SharedDumpsTest, Dump11DeviceFailuresThenHeader) {
  const BfcLog log = LoadSharedDump("11.txt");
  ASSERT_EQ(log.sub_allocator_failures.size(), 4u);
  for (const SubAllocatorFailure& f : log.sub_allocator_failures) EXPECT_EQ(f.bytes, 9029127168u);
  ASSERT_EQ(log.dumps.size(), 1u);
  const Header& h = *log.dumps[0].header;
  EXPECT_EQ(h.request.text, "560.44MiB");
  EXPECT_EQ(h.rounded, 587661312u);
  EXPECT_EQ(h.op, "_EagerConst");
  EXPECT_EQ(h.line, 9);
}

TEST(SharedDumpsTest, Dump12HeaderAndNotAFailureWarning) {
  const BfcLog log = LoadSharedDump("12.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const Header& h = *log.dumps[0].header;
  EXPECT_EQ(h.request.text, "34.10MiB");
  EXPECT_EQ(h.rounded, 35758080u);
  EXPECT_EQ(h.op, "StatefulPartitionedCall/model_new14_1/batch_normalization_36_1/moments/SquaredDifference");
  ASSERT_EQ(log.not_a_failure.size(), 1u);
  EXPECT_EQ(log.not_a_failure[0].request.text, "4.64GiB");
  EXPECT_EQ(log.not_a_failure[0].freed_by_count, 0u);
  EXPECT_EQ(log.unmatched_lines, 0);
  const Diagnosis diag = Diagnose(log.dumps[0]);
  EXPECT_EQ(diag.verdict, Verdict::kUnknown);
  EXPECT_EQ(diag.verdict_basis, "the dump does not show the free bytes in the pool, the unallocated limit");
  EXPECT_EQ(diag.missing.size(), 4u);  // chunk list, bins, pool line, Stats
}

TEST(SharedDumpsTest, Dump13Bins) {
  const BfcLog log = LoadSharedDump("13.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  ASSERT_EQ(d.bins.size(), 6u);
  ExpectBin(d.bins[0], 2048, 2, 2, "7.0KiB");
  EXPECT_EQ(d.bins[0].requested_in_use->text, "6.8KiB");
  ExpectBin(d.bins[5], 65536, 0, 0, "0B");
}

TEST(SharedDumpsTest, Dump15HostAllocator) {
  const BfcLog log = LoadSharedDump("15.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  ASSERT_EQ(d.bins.size(), 6u);
  ExpectBin(d.bins[0], 65536, 0, 0, "0B");
  EXPECT_EQ(d.bins[5].bin_size, 2097152u);
  EXPECT_FALSE(d.bins[5].allocated.has_value());  // "0B allocated for ch[...]"
  ASSERT_EQ(d.bin_for.size(), 1u);
  EXPECT_EQ(d.bin_for[0].rounded.text, "3.72GiB");
  EXPECT_TRUE(d.bin_for[0].chunks.empty());
  ASSERT_EQ(d.ChunkCount(), 9u);
  EXPECT_EQ(d.regions[0].chunks[0].addr, 0x1172d000000u);
  EXPECT_EQ(d.regions[0].chunks[0].size, 4294967296u);
  EXPECT_EQ(d.regions[0].chunks[7].size, 5179869184u);
}

TEST(SharedDumpsTest, Dump21WindowsExhaustion) {
  const BfcLog log = LoadSharedDump("21.txt");
  ASSERT_EQ(log.dumps.size(), 1u);
  const BfcDump& d = log.dumps[0];
  EXPECT_EQ(d.header->form, HeaderForm::kRounded);
  EXPECT_EQ(d.header->request.text, "112.5KiB");
  EXPECT_EQ(d.header->rounded, 115200u);
  ASSERT_EQ(d.bins.size(), 21u);
  ExpectBin(d.bins[0], 256, 3940, 3940, "985.0KiB");
  ExpectBin(d.bins[8], 65536, 4908, 4908, "539.22MiB");
  EXPECT_EQ(d.bins[8].requested_in_use->text, "539.21MiB");
  ExpectBin(d.bins[20], 268435456, 0, 0, "0B");
  EXPECT_EQ(d.bin_for.at(0).bin_size.text, "64.0KiB");
  ASSERT_EQ(d.regions.size(), 1u);
  ASSERT_EQ(d.regions[0].chunks.size(), 4u);
  EXPECT_EQ(d.regions[0].chunks[0].layout, ChunkLayout::kNextBeforeSize);
  EXPECT_EQ(d.regions[0].chunks[0].addr, 0x600F80000u);
  EXPECT_EQ(d.regions[0].chunks[3].addr, 0x622D51300u);
  EXPECT_EQ(d.regions[0].chunks[3].next, kNoNextChunk);
  ASSERT_EQ(d.summary.size(), 16u);
  EXPECT_EQ(d.summary[3].count, 4905u);
  EXPECT_EQ(d.sum_total->text, "542.02MiB");
  ASSERT_TRUE(d.pool.has_value());
  EXPECT_TRUE(d.pool->legacy_name);
  EXPECT_EQ(d.pool->pool_bytes, 568350976u);
  EXPECT_EQ(d.pool->memory_limit, 568351129u);
  EXPECT_EQ(d.pool->available, 153u);
  EXPECT_EQ(d.stats.lines, 5);
  EXPECT_EQ(d.stats.limit, 568351129u);
  EXPECT_EQ(d.stats.in_use, 568350976u);
  EXPECT_EQ(d.stats.num_allocs, 12827u);
  EXPECT_EQ(d.stats.max_alloc_size, 461056u);
  EXPECT_FALSE(d.stats.reserved.has_value());

  const Diagnosis diag = Diagnose(d);
  EXPECT_FALSE(diag.heap_rebuilt);
  EXPECT_EQ(diag.verdict, Verdict::kOom);
  EXPECT_EQ(diag.verdict_basis, "rounded request 115200 > free 0 + unallocated 153");
  EXPECT_EQ(diag.free_bytes, 0u);
  EXPECT_EQ(diag.what_if.fits_after_defrag, false);
  EXPECT_EQ(diag.what_if.fits_paged, false);
  EXPECT_EQ(diag.what_if.more_limit_bytes, 115047u);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
