// Every line form of shared/reference/bfc-allocator.md §2-§3, one matcher at a time.
#include "trace/bfc_dump/line_parsers.h"

#include "gtest/gtest.h"
#include "trace/bfc_dump/line_text.h"

namespace hbmsim::trace::bfc_dump {
namespace {

Header HeaderOf(std::string_view msg) {
  auto oom = MatchOomLine(msg);
  EXPECT_TRUE(oom && std::holds_alternative<Header>(*oom)) << msg;
  return oom && std::holds_alternative<Header>(*oom) ? std::get<Header>(*oom) : Header{};
}

TEST(LogPrefixTest, EveryLoggerForm) {
  const LogLine full = SplitLogPrefix(
      "2023-10-02 16:36:14.402957: I tensorflow/tsl/framework/bfc_allocator.cc:1039] BFCAllocator dump for "
      "X");
  EXPECT_EQ(full.message, "BFCAllocator dump for X");
  ASSERT_TRUE(full.time_sec.has_value());
  EXPECT_NEAR(*full.time_sec, 1696264574.402957, 1e-5);  // 2023-10-02T16:36:14.402957Z

  EXPECT_EQ(SplitLogPrefix("I tensorflow/core/common_runtime/bfc_allocator.cc:643] Bin (4096): x").message,
            "Bin (4096): x");
  EXPECT_EQ(SplitLogPrefix("9:07:50.044545: W external/local_xla/xla/tsl/framework/bfc_allocator.cc:501] m")
                .message,
            "m");
  EXPECT_EQ(
      SplitLogPrefix("W0423 01:00:16.820335   12345 bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran").message,
      "Allocator (GPU_0_bfc) ran");
  EXPECT_EQ(
      SplitLogPrefix("2020-06-23 19:38:17.8: W c:\\tf_jenkins\\home\\bfc_allocator.cc:419] msg").message,
      "msg");
  // The five leading spaces of the summary title survive; trimming is the caller's.
  EXPECT_EQ(SplitLogPrefix("I a/bfc_allocator.cc:1100]      Summary of in-use Chunks by size: ").message,
            "     Summary of in-use Chunks by size: ");
  const LogLine pasted = SplitLogPrefix("Limit:                      3502964736");
  EXPECT_FALSE(pasted.had_prefix);
  EXPECT_EQ(pasted.message, "Limit:                      3502964736");
  EXPECT_FALSE(SplitLogPrefix("Traceback [most recent call last]: x").had_prefix);
}

TEST(HumanBytesTest, ReadsEveryUnit) {
  EXPECT_EQ(ParseHumanBytes("256B")->approx_bytes, 256u);
  EXPECT_EQ(ParseHumanBytes("112.5KiB")->approx_bytes, 115200u);
  EXPECT_EQ(ParseHumanBytes("585.94MiB")->approx_bytes, 614402621u);  // 585.94 * 2^20, rounded
  EXPECT_EQ(ParseHumanBytes("8.00GiB")->approx_bytes, uint64_t{8} << 30);
  EXPECT_FALSE(ParseHumanBytes("8.41G").has_value());
  EXPECT_FALSE(ParseHumanBytes("KiB").has_value());
  EXPECT_FALSE(ParseHumanBytes("1.KiB").has_value());
}

TEST(HeaderTest, EveryEra) {
  Header tf1 = HeaderOf(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 84.50MiB.  Current "
      "allocation summary follows.");
  EXPECT_EQ(tf1.form, HeaderForm::kTf1);
  EXPECT_EQ(tf1.allocator, "GPU_0_bfc");
  EXPECT_EQ(tf1.request.text, "84.50MiB");
  EXPECT_FALSE(tf1.rounded.has_value());

  Header tf21 = HeaderOf(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 112.5KiB (rounded to "
      "115200).  Current allocation summary follows.");
  EXPECT_EQ(tf21.form, HeaderForm::kRounded);
  EXPECT_EQ(tf21.rounded, 115200u);

  Header ref = HeaderOf(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 585.94MiB (rounded to "
      "614400000)requested by op _EagerConst");
  EXPECT_EQ(ref.form, HeaderForm::kRequestedByOp);
  EXPECT_EQ(ref.rounded, 614400000u);
  EXPECT_EQ(ref.op, "_EagerConst");

  Header head = HeaderOf(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to "
      "1073741824) from the lower end requested by op dot.3");
  EXPECT_EQ(head.form, HeaderForm::kHead);
  EXPECT_EQ(head.end, "lower");
  EXPECT_EQ(head.op, "dot.3");

  Header cut = HeaderOf(
      "Allocator (gpu_host_bfc) ran out of memory trying to allocate 2.0KiB (rounded to "
      "2048)requested by op ");
  EXPECT_EQ(cut.form, HeaderForm::kTruncated);
  EXPECT_EQ(cut.allocator, "gpu_host_bfc");
  EXPECT_EQ(cut.op, "");

  Header old = HeaderOf("Ran out of memory trying to allocate 392.00MiB.  See logs for memory state");
  EXPECT_EQ(old.form, HeaderForm::kGpuBfc2015);
  EXPECT_EQ(old.allocator, "");
  EXPECT_EQ(old.request.approx_bytes, 392u << 20);
}

TEST(HeaderTest, NotAFailureWarnings) {
  for (std::string_view msg : {
           "Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.64GiB with freed_by_count=0. The "
           "caller "
           "indicates that this is not a failure, but this may mean that there could be performance gains if "
           "more memory were available.",
           "Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.64GiB from the lower end with "
           "freed_by_count=0. The caller indicates that this is not a failure, but ...",
       }) {
    auto oom = MatchOomLine(msg);
    ASSERT_TRUE(oom && std::holds_alternative<NotAFailureWarning>(*oom)) << msg;
    EXPECT_EQ(std::get<NotAFailureWarning>(*oom).request.text, "4.64GiB");
    EXPECT_EQ(std::get<NotAFailureWarning>(*oom).freed_by_count, 0u);
  }
  auto tf1 = MatchOomLine(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.2KiB. The caller "
      "indicates that this is not a failure, but may mean ...");
  ASSERT_TRUE(tf1 && std::holds_alternative<NotAFailureWarning>(*tf1));
  EXPECT_FALSE(std::get<NotAFailureWarning>(*tf1).freed_by_count.has_value());
  // Retry disabled globally: the same words without "not a failure", and a dump follows.
  EXPECT_TRUE(std::holds_alternative<Header>(*MatchOomLine(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.2KiB with freed_by_count=3.")));
}

TEST(BinLineTest, TabSpacesAndOldestForm) {
  auto tab = MatchBinLine(
      "Bin (256): \tTotal Chunks: 200, Chunks in use: 197. 50.0KiB allocated for chunks. "
      "49.2KiB in use in bin. 3.9KiB client-requested in use in bin.");
  ASSERT_TRUE(tab);
  EXPECT_EQ(tab->bin_size, 256u);
  EXPECT_EQ(tab->total_chunks, 200u);
  EXPECT_EQ(tab->chunks_in_use, 197u);
  EXPECT_EQ(tab->allocated->text, "50.0KiB");
  EXPECT_EQ(tab->in_use->text, "49.2KiB");
  EXPECT_EQ(tab->requested_in_use->text, "3.9KiB");
  EXPECT_FALSE(tab->oldest_form);

  auto spaces =
      MatchBinLine("Bin (16384):         Total Chunks: 0, Chunks in use: 0. 0B allocated for chunks.");
  ASSERT_TRUE(spaces);
  EXPECT_EQ(spaces->bin_size, 16384u);
  EXPECT_EQ(spaces->allocated->text, "0B");
  EXPECT_FALSE(spaces->in_use.has_value());

  auto oldest = MatchBinLine(
      "Bin (131072): \tTotal Chunks: 1, Chunks in use: 0 130.0KiB allocated for chunks. 0B "
      "client-requested for chunks. 0B in use in bin. 0B client-requested in use in bin.");
  ASSERT_TRUE(oldest);
  EXPECT_TRUE(oldest->oldest_form);
  EXPECT_EQ(oldest->allocated->text, "130.0KiB");
  EXPECT_EQ(oldest->in_use->text, "0B");
  EXPECT_EQ(oldest->requested_in_use->text, "0B");
  EXPECT_FALSE(MatchBinLine("Bin for 8.49GiB was 256.00MiB, Chunk State:").has_value());
}

TEST(ChunkStateTest, WithAndWithoutBinNumAndNeighbours) {
  auto ref = MatchChunkState(
      "Size: 274.42MiB | Requested Size: 4.50MiB | in_use: 0 | bin_num: 20, prev:   Size: "
      "4.50MiB | Requested Size: 4.50MiB | in_use: 1 | bin_num: -1, next:   Size: 256B | "
      "Requested Size: 4B | in_use: 1 | bin_num: -1");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->chunk.size.text, "274.42MiB");
  EXPECT_EQ(ref->chunk.requested.text, "4.50MiB");
  EXPECT_FALSE(ref->chunk.in_use);
  EXPECT_EQ(ref->chunk.bin_num, 20);
  EXPECT_EQ(ref->prev->bin_num, -1);
  EXPECT_TRUE(ref->prev->in_use);
  EXPECT_EQ(ref->next->requested.text, "4B");

  auto tf1 = MatchChunkState("Size: 6.09GiB | Requested Size: 781.2KiB | in_use: 0");
  ASSERT_TRUE(tf1);
  EXPECT_FALSE(tf1->chunk.bin_num.has_value());
  EXPECT_FALSE(tf1->prev.has_value());
  EXPECT_FALSE(tf1->next.has_value());
  auto bin = MatchBinFor("Bin for 585.94MiB was 256.00MiB, Chunk State:");
  ASSERT_TRUE(bin);
  EXPECT_EQ(bin->rounded.text, "585.94MiB");
  EXPECT_EQ(bin->bin_size.approx_bytes, 268435456u);
}

TEST(ChunkLineTest, ThreeLayoutsAndOptionalFields) {
  auto tf1 = MatchChunkLine("Chunk at 0x7f94a947ca00 of size 81920");
  ASSERT_TRUE(tf1);
  EXPECT_EQ(tf1->layout, ChunkLayout::kTf1);
  EXPECT_TRUE(tf1->in_use);
  EXPECT_EQ(tf1->addr, 0x7f94a947ca00u);
  EXPECT_EQ(tf1->size, 81920u);
  auto tf1_free = MatchChunkLine("Free at 0x7f94a939ca00 of size 917504");  // the one-space second pass
  ASSERT_TRUE(tf1_free);
  EXPECT_FALSE(tf1_free->in_use);

  auto windows = MatchChunkLine("InUse at 0000000622D51300 next 18446744073709551615 of size 214528");
  ASSERT_TRUE(windows);
  EXPECT_EQ(windows->layout, ChunkLayout::kNextBeforeSize);
  EXPECT_EQ(windows->addr, 0x622D51300u);
  EXPECT_EQ(windows->next, kNoNextChunk);
  EXPECT_EQ(windows->size, 214528u);

  auto ref = MatchChunkLine("Free  at 7f1c8a0c8500 of size 291372032 next 40011");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->layout, ChunkLayout::kNextAfterSize);
  EXPECT_FALSE(ref->in_use);
  EXPECT_EQ(ref->next, 40011u);

  auto debug = MatchChunkLine(
      "InUse at 7f00 of size 512 by op MatMul action_count 77 step 3 next 9 "
      "freed_at_count 12");
  ASSERT_TRUE(debug);
  EXPECT_EQ(debug->op, "MatMul");
  EXPECT_EQ(debug->next, 9u);
  EXPECT_EQ(debug->freed_at_count, 12u);

  auto head =
      MatchChunkLine("InUse at 7f00 of size 512 tag upper allocation_annotation a.py:3 b.py:9 next 4");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->tag, "upper");
  EXPECT_EQ(head->next, 4u);
  EXPECT_FALSE(MatchChunkLine("InUse at f00950c00 of").has_value());
}

TEST(TailLinesTest, SummaryPoolStatsOccupancy) {
  auto summary = MatchSummaryLine("4905 Chunks of size 115200 totalling 538.88MiB");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 4905u);
  EXPECT_EQ(summary->size, 115200u);
  EXPECT_EQ(summary->total.text, "538.88MiB");
  EXPECT_EQ(MatchSumTotal("Sum Total of in-use chunks: 561.92MiB")->text, "561.92MiB");
  EXPECT_EQ(MatchRegionLine("Next region of size 3502964736"), 3502964736u);

  auto legacy = MatchPoolLine(
      "total_region_allocated_bytes_: 568350976 memory_limit_: 568351129 available bytes: "
      "153 curr_region_allocation_bytes_: 1073741824");
  ASSERT_TRUE(legacy);
  EXPECT_TRUE(legacy->legacy_name);
  EXPECT_EQ(legacy->available, 153u);
  EXPECT_EQ(legacy->curr_region_allocation_bytes, 1073741824u);
  auto ref = MatchPoolLine(
      "Total bytes in pool: 3502964736 memory_limit_: 3502964736 available bytes: 0 "
      "curr_region_allocation_bytes_: 7005929472");
  ASSERT_TRUE(ref);
  EXPECT_FALSE(ref->legacy_name);

  Stats stats;
  EXPECT_TRUE(MatchStatsLine("InUse:                       589212672", stats));
  EXPECT_TRUE(MatchStatsLine("MaxInUse:                568350976", stats));  // 14-column labels
  EXPECT_EQ(stats.in_use, 589212672u);
  EXPECT_EQ(stats.max_in_use, 568350976u);
  EXPECT_FALSE(stats.human_readable);
  EXPECT_TRUE(MatchStatsLine("LargestFreeBlock:            532.88MiB", stats));  // HEAD
  EXPECT_TRUE(stats.human_readable);
  EXPECT_EQ(stats.largest_free_block, 558765179u);
  EXPECT_EQ(stats.lines, 3);
  EXPECT_FALSE(MatchStatsLine("InUse: lots", stats));

  EXPECT_TRUE(IsOccupancyLine("*__xx**"));
  EXPECT_TRUE(IsOccupancyLine("<allocator contains no memory>"));
  EXPECT_FALSE(IsOccupancyLine("*_ _"));
  auto failure = MatchSubAllocatorFailure(
      "failed to allocate 8.41G (9029127168 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->bytes, 9029127168u);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
