// Verdicts, consistency checks and what-ifs on small hand-written dumps.
#include "trace/bfc_dump/diagnosis.h"

#include <map>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace hbmsim::trace::bfc_dump {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

struct ChunkSpec {
  bool in_use;
  uint64_t size;
};

// Optional lines of a dump, each placed where DumpMemoryLog prints it.
struct Extras {
  std::string bins;     // after the header
  std::string summary;  // after the chunk list
  std::string stats;    // after the pool line
};

// A REF-era dump of one region at `base` holding `chunks`, with a pool line.
std::string DumpText(uint64_t rounded, uint64_t base, const std::vector<ChunkSpec>& chunks, uint64_t limit,
                     const Extras& extras = {}) {
  uint64_t region = 0;
  for (const ChunkSpec& c : chunks) region += c.size;
  std::string s = fmt::format(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate {}B (rounded to {})requested by op Op\n",
      rounded, rounded);
  s += extras.bins + fmt::format("Next region of size {}\n", region);
  uint64_t addr = base;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const bool last = i + 1 == chunks.size();
    s += fmt::format("{} at {:x} of size {} next {}\n", chunks[i].in_use ? "InUse" : "Free ", addr,
                     chunks[i].size, last ? kNoNextChunk : i + 1);
    addr += chunks[i].size;
  }
  s += extras.summary;
  s += fmt::format(
      "Total bytes in pool: {} memory_limit_: {} available bytes: {} curr_region_allocation_bytes_: 0\n",
      region, limit, limit - region);
  return s + extras.stats;
}

Diagnosis DiagnoseText(const std::string& text) {
  const BfcLog log = ParseText(text);
  return log.dumps.empty() ? Diagnosis{} : Diagnose(log.dumps[0]);
}

TEST(BinNumTest, MatchesBfc) {
  EXPECT_EQ(BinNumForSize(0), 0);
  EXPECT_EQ(BinNumForSize(511), 0);
  EXPECT_EQ(BinNumForSize(512), 1);
  EXPECT_EQ(BinNumForSize(268435455), 19);
  EXPECT_EQ(BinNumForSize(268435456), 20);
  EXPECT_EQ(BinNumForSize(uint64_t{1} << 40), 20);
}

TEST(DiagnosisTest, TrueOomWhenFreePlusUnallocatedIsTooSmall) {
  const Diagnosis d =
      DiagnoseText(DumpText(8 * kMiB, 0x1000000, {{true, 6 * kMiB}, {false, 1 * kMiB}}, 8 * kMiB));
  ASSERT_TRUE(d.heap_rebuilt);
  EXPECT_EQ(d.verdict, Verdict::kOom);
  EXPECT_EQ(d.verdict_basis, "rounded request 8388608 > free 1048576 + unallocated 1048576");
  EXPECT_EQ(d.what_if.fits_after_defrag, false);
  EXPECT_EQ(d.what_if.more_limit_bytes, 7 * kMiB);
  // The top chunk is free: coalescing new memory with it needs 1 MiB less.
  EXPECT_EQ(d.what_if.more_limit_bytes_coalescing, 6 * kMiB);
  EXPECT_EQ(d.what_if.pages_needed, 4u);
  EXPECT_EQ(d.what_if.free_pages_2mib, 0u);  // a 1 MiB free chunk holds no whole 2 MiB page
  EXPECT_EQ(d.what_if.available_pages_2mib, 0u);
  EXPECT_EQ(d.what_if.fits_paged, false);
}

TEST(DiagnosisTest, FragmentationAndPagesCountedByAddress) {
  // Free chunks of 3 MiB at 1 MiB offsets hold one aligned 2 MiB page each.
  const Diagnosis d = DiagnoseText(
      DumpText(4 * kMiB, 0x7f0000000000,
               {{true, 1 * kMiB}, {false, 3 * kMiB}, {true, 1 * kMiB}, {false, 3 * kMiB}, {true, 4 * kMiB}},
               12 * kMiB));
  ASSERT_TRUE(d.heap_rebuilt);
  EXPECT_EQ(d.verdict, Verdict::kFragmentation);
  EXPECT_EQ(d.largest_free, 3 * kMiB);
  EXPECT_EQ(d.free_bytes, 6 * kMiB);
  EXPECT_EQ(d.what_if.fits_after_defrag, true);
  EXPECT_EQ(d.what_if.free_pages_2mib, 2u);
  EXPECT_EQ(d.what_if.pages_needed, 2u);
  EXPECT_EQ(d.what_if.fits_paged, true);
  EXPECT_EQ(d.what_if.more_limit_bytes, 4 * kMiB);
  EXPECT_EQ(d.what_if.more_limit_bytes_coalescing, 4 * kMiB);  // the top chunk is in use
  ASSERT_EQ(d.free_histogram.size(), 1u);
  EXPECT_EQ(d.free_histogram[0].bin_size, 2 * kMiB);
  EXPECT_EQ(d.free_histogram[0].count, 2u);
}

TEST(DiagnosisTest, AFittingFreeChunkIsUnexplained) {
  const Diagnosis d = DiagnoseText(DumpText(1024, 0x1000, {{true, 1024}, {false, 4096}}, 5120));
  EXPECT_EQ(d.verdict, Verdict::kUnexplained);
  EXPECT_EQ(d.verdict_basis, "a free chunk of 4096 bytes could hold the rounded request 1024");
}

TEST(DiagnosisTest, FailedChecksNameTheFirstMismatch) {
  Extras extras;
  extras.bins = "Bin (1024): \tTotal Chunks: 1, Chunks in use: 1. 1.0KiB allocated for chunks.\n";
  extras.summary = "1 Chunks of size 512 totalling 512B\nSum Total of in-use chunks: 2.0KiB\n";
  extras.stats = "InUse:                       1536\n";
  const std::string text = DumpText(4096, 0x1000, {{true, 1024}, {false, 1024}}, 2048, extras);
  const Diagnosis d = DiagnoseText(text);
  ASSERT_TRUE(d.heap_rebuilt);
  std::map<std::string, Check> by_name;
  for (const Check& c : d.checks) by_name[c.name] = c;
  EXPECT_TRUE(by_name["contiguity"].passed);
  EXPECT_TRUE(by_name["pool"].passed);
  EXPECT_FALSE(by_name["bins"].passed);
  EXPECT_EQ(by_name["bins"].detail,
            "line 2: Bin (1024) says 1 chunks, 1 in use; the chunk list has 2, 1 in use");
  EXPECT_FALSE(by_name["summary"].passed);
  EXPECT_EQ(by_name["summary"].detail, "size 1024: the summary says 0 chunks, the chunk list has 1");
  EXPECT_FALSE(by_name["sum total"].passed);
  EXPECT_FALSE(by_name["in use"].passed);
  EXPECT_EQ(by_name["in use"].detail, "in-use chunks sum to 1024, Stats InUse says 1536");
}

TEST(DiagnosisTest, NonContiguousChunksFailContiguity) {
  const BfcLog log = ParseText(
      "Next region of size 768\nInUse at 1000 of size 256 next 1\nFree  at 1200 of size 512 next "
      "18446744073709551615\n");
  const Heap heap = RebuildHeap(log.dumps[0]);
  const Check c = CheckConsistency(log.dumps[0], heap)[0];
  EXPECT_EQ(c.name, "contiguity");
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.detail, "line 2: chunk at 0x1000 + 256 ends at 0x1100, next chunk (line 3) starts at 0x1200");
}

TEST(DiagnosisTest, Tf1ChunkListWithoutRegionLinesIsCompleteByBinCounts) {
  std::string text =
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.0KiB.  Current allocation summary "
      "follows.\n";
  for (int bin = 0; bin < kNumBins; ++bin) {
    const int total = bin == 0 ? 2 : bin == 1 ? 1 : 0;
    text += fmt::format("Bin ({}): \tTotal Chunks: {}, Chunks in use: {}. {} allocated for chunks.\n",
                        BinSize(bin), total, bin == 0 ? 2 : 0, bin < 2 ? "512B" : "0B");
  }
  // Two regions, the second 1 MiB above the first.
  text += "Chunk at 0x100000 of size 256\nFree  at 0x100100 of size 512\nChunk at 0x200000 of size 256\n";
  const BfcLog log = ParseText(text);
  ASSERT_EQ(log.dumps.size(), 1u);
  EXPECT_TRUE(ChunkListGaps(log.dumps[0]).empty());
  const Diagnosis d = Diagnose(log.dumps[0]);
  ASSERT_TRUE(d.heap_rebuilt);
  EXPECT_EQ(d.heap->regions, 2u);
  EXPECT_EQ(d.heap->free_bytes, 512u);
  EXPECT_EQ(d.checks[0].name, "contiguity");
  EXPECT_EQ(d.checks[0].detail,
            "1 adjacent chunk pairs touch; 1 region boundaries inferred from address gaps");
  ASSERT_EQ(d.checks.size(), 2u);  // TF 1.x prints no handles, no pool line, no Stats
  EXPECT_EQ(d.checks[1].name, "bins");
  for (const Check& c : d.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_TRUE(d.rounded_is_estimate);
  EXPECT_EQ(d.rounded, 2048u);
}

TEST(DiagnosisTest, PartialDumpJudgedFromPoolAndStats) {
  const Diagnosis d = DiagnoseText(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)requested "
      "by op "
      "X\nTotal bytes in pool: 4294967296 memory_limit_: 4294967296 available bytes: 0 "
      "curr_region_allocation_bytes_: 0\nInUse:                  2147483648\n");
  EXPECT_FALSE(d.heap_rebuilt);
  EXPECT_EQ(d.free_bytes, uint64_t{2} << 30);
  EXPECT_EQ(d.verdict, Verdict::kFragmentation);
  EXPECT_EQ(
      d.verdict_basis,
      "rounded request 1073741824 <= free 2147483648 + unallocated 0, so no free chunk was large enough");
  EXPECT_EQ(d.what_if.fits_after_defrag, true);
  EXPECT_FALSE(d.what_if.fits_paged.has_value());  // needs chunk addresses
  EXPECT_EQ(d.missing,
            (std::vector<std::string>{"a complete chunk list: no chunk lines", "bin lines (0 of 21 shown)"}));
}

TEST(DiagnosisTest, HeadMemorySummaryGivesAnApproximateVerdict) {
  const std::string header =
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824) from the "
      "lower "
      "end requested by op dot\n";
  const Diagnosis oom =
      DiagnoseText(header +
                   "Allocator memory summary: rounded request 1.00GiB, total free in pool 10.0KiB, largest "
                   "free chunk usable by "
                   "lower end 10.0KiB, unallocated bytes 0B, pool size 2.00GiB, pool limit 2.00GiB\n");
  EXPECT_TRUE(oom.approximate);
  EXPECT_EQ(oom.verdict, Verdict::kOom);
  EXPECT_EQ(oom.verdict_basis,
            "rounded request 1073741824 > free 10240 + unallocated 0 (rounded values of the allocator memory "
            "summary)");
  EXPECT_EQ(oom.limit, uint64_t{2} << 30);

  const Diagnosis frag =
      DiagnoseText(header +
                   "Allocator memory summary: rounded request 1.00GiB, total free in pool 3.00GiB, largest "
                   "free chunk usable by "
                   "lower end 512.00MiB, unallocated bytes 0B, pool size 4.00GiB, pool limit 4.00GiB\n");
  EXPECT_EQ(frag.verdict, Verdict::kFragmentation);
  EXPECT_EQ(frag.largest_free, uint64_t{512} << 20);
  EXPECT_EQ(frag.what_if.fits_after_defrag, true);
  EXPECT_EQ(frag.missing, (std::vector<std::string>{"a complete chunk list: no chunk lines",
                                                    "bin lines (0 of 21 shown)", "the Stats block"}));
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
