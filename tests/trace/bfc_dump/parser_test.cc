// How ParseBfcLog splits a log into dumps, and what it does with the rest.
#include "trace/bfc_dump/parser.h"

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace hbmsim::trace::bfc_dump {
namespace {

constexpr char kPrefix[] = "2024-01-02 03:04:05.000001: I tsl/framework/bfc_allocator.cc:1046] ";

std::string Logged(std::string_view msg) { return std::string(kPrefix) + std::string(msg) + "\n"; }

// A small but complete REF-era dump: one 4096-byte region, two chunks.
std::string SmallDump(std::string_view request, uint64_t rounded) {
  std::string s = fmt::format(
      "2024-01-02 03:04:05.000000: W tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate {} (rounded to {})requested by op Add\n"
      "If the cause is memory fragmentation maybe the environment variable "
      "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. \n"
      "Current allocation summary follows.\nCurrent allocation summary follows.\n",
      request, rounded);
  s += Logged("BFCAllocator dump for GPU_0_bfc");
  s += Logged("Next region of size 4096");
  s += Logged("InUse at 7f0000000000 of size 1024 next 1");
  s += Logged("Free  at 7f0000000400 of size 3072 next 18446744073709551615");
  s += Logged("     Summary of in-use Chunks by size: ");
  s += Logged("1 Chunks of size 1024 totalling 1.0KiB");
  s += Logged("Sum Total of in-use chunks: 1.0KiB");
  s += Logged(
      "Total bytes in pool: 4096 memory_limit_: 4096 available bytes: 0 curr_region_allocation_bytes_: 8192");
  s += Logged("Stats: ");
  s += "Limit:                            4096\nInUse:                            1024\n\n";
  s += "2024-01-02 03:04:05.000002: W tsl/framework/bfc_allocator.cc:497] *****_______\n";
  return s;
}

TEST(ParserTest, TwoDumpsInOneLogStaySeparate) {
  const BfcLog log =
      ParseText(SmallDump("4.0KiB", 4096) + "some unrelated output\n" + SmallDump("3.5KiB", 3584));
  ASSERT_EQ(log.dumps.size(), 2u);
  EXPECT_EQ(log.dumps[0].header->rounded, 4096u);
  EXPECT_EQ(log.dumps[1].header->rounded, 3584u);
  EXPECT_EQ(log.dumps[0].first_line, 1);
  EXPECT_EQ(log.dumps[0].last_line, 17);
  EXPECT_EQ(log.dumps[1].first_line, 19);
  for (const BfcDump& d : log.dumps) {
    EXPECT_EQ(d.allocator, "GPU_0_bfc");
    EXPECT_EQ(d.ChunkCount(), 2u);
    EXPECT_EQ(d.stats.limit, 4096u);
    EXPECT_EQ(d.occupancy, "*****_______");
    EXPECT_EQ(d.gaps, 0);
  }
  EXPECT_EQ(log.unmatched_lines, 1);
  EXPECT_EQ(log.first_unmatched, std::vector<int>{18});
}

TEST(ParserTest, DumpsWithoutHeadersSplitWhereTheOrderRestarts) {
  std::string text = Logged("Bin (256): \tTotal Chunks: 1, Chunks in use: 1. 256B allocated for chunks.");
  text += Logged("Bin (512): \tTotal Chunks: 0, Chunks in use: 0. 0B allocated for chunks.");
  text += Logged("Bin (256): \tTotal Chunks: 2, Chunks in use: 2. 512B allocated for chunks.");
  text += Logged("Chunk at 0x100 of size 256");
  text += Logged("Bin (256): \tTotal Chunks: 3, Chunks in use: 3. 768B allocated for chunks.");
  const BfcLog log = ParseText(text);
  ASSERT_EQ(log.dumps.size(), 3u);
  EXPECT_EQ(log.dumps[0].bins.size(), 2u);
  EXPECT_EQ(log.dumps[1].bins.size(), 1u);
  EXPECT_EQ(log.dumps[1].ChunkCount(), 1u);
  EXPECT_EQ(log.dumps[2].bins[0].total_chunks, 3u);
}

TEST(ParserTest, The2015HeaderFollowsItsDump) {
  const BfcLog log = ParseText(
      "I tensorflow/core/common_runtime/bfc_allocator.cc:643] Bin (256): \tTotal Chunks: 0, Chunks in use: 0 "
      "0B "
      "allocated for chunks. 0B client-requested for chunks. 0B in use in bin. 0B client-requested in use in "
      "bin.\n"
      "W tensorflow/core/common_runtime/bfc_allocator.cc:274] Ran out of memory trying to allocate "
      "392.00MiB.  "
      "See logs for memory state.\n"
      "I tensorflow/core/common_runtime/bfc_allocator.cc:643] Bin (256): \tTotal Chunks: 0, Chunks in use: 0 "
      "0B "
      "allocated for chunks.\n");
  ASSERT_EQ(log.dumps.size(), 2u);
  ASSERT_TRUE(log.dumps[0].header.has_value());
  EXPECT_EQ(log.dumps[0].header->form, HeaderForm::kGpuBfc2015);
  EXPECT_EQ(log.dumps[0].header->line, 2);
  EXPECT_EQ(log.dumps[0].bins.size(), 1u);
  EXPECT_FALSE(log.dumps[1].header.has_value());
}

TEST(ParserTest, CutsWindowsAndElisionsMarkTheChunkListIncomplete) {
  std::string text = "# a comment\n" + Logged("Next region of size 1024");
  text += Logged("InUse at 7f00 of size 256 next 1");
  text += "# ---- window B ----\n";
  text += Logged("InUse at 7f00000 of size 256 next 18446744073709551615");
  const BfcLog windowed = ParseText(text);
  EXPECT_EQ(windowed.comment_lines, 2);
  EXPECT_EQ(windowed.dumps[0].gaps, 1);
  EXPECT_TRUE(windowed.dumps[0].chunk_list_interrupted);

  const BfcLog cut =
      ParseText(Logged("Next region of size 1024") + Logged("InUse at 7f00 of size 256 next 1") +
                std::string(kPrefix) + "InUse at 7f00000 of[...]\n");
  EXPECT_EQ(cut.truncated_lines, 1);
  EXPECT_EQ(cut.dumps[0].truncated_lines, 1);
  EXPECT_TRUE(cut.dumps[0].chunk_list_interrupted);

  const BfcLog elided =
      ParseText(Logged("Next region of size 1024") + Logged("InUse at 7f00 of size 256 next 1") +
                "\n.... A very long repetition of this message\n" +
                Logged("InUse at 7f00000 of size 256 next 18446744073709551615"));
  EXPECT_TRUE(elided.dumps[0].chunk_list_interrupted);
  EXPECT_EQ(elided.unmatched_lines, 1);

  // Another thread's log line between chunk lines loses nothing.
  const BfcLog interleaved =
      ParseText(Logged("Next region of size 1024") + Logged("InUse at 7f00 of size 256 next 1") +
                Logged("Some other component says hello") + Logged("InUse at 7f00100 of size 768 next 7"));
  EXPECT_FALSE(interleaved.dumps[0].chunk_list_interrupted);
  EXPECT_EQ(interleaved.dumps[0].regions[0].chunks.size(), 2u);
}

TEST(ParserTest, ATimestampJumpingBackStartsAnotherDump) {
  const std::string later = "2023-04-22 18:04:39.633591: I a/bfc_allocator.cc:1034] ";
  const std::string earlier = "2023-03-25 09:56:53.734116: I a/bfc_allocator.cc:1083] ";
  const BfcLog log = ParseText(later + "BFCAllocator dump for GPU_0_bfc\n" + earlier +
                               "InUse at 7f11262c6500 of size 2048 next 115\n");
  ASSERT_EQ(log.dumps.size(), 2u);
  EXPECT_TRUE(log.dumps[0].has_title);
  EXPECT_EQ(log.dumps[1].ChunkCount(), 1u);
}

TEST(ParserTest, WarningsAndDeviceFailuresAreCountedApart) {
  const BfcLog log = ParseText(
      Logged("failed to allocate 8.41G (9029127168 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of "
             "memory") +
      Logged("Garbage collection: deallocate free memory regions (i.e., allocations) so that we can "
             "re-allocate a "
             "larger region to avoid OOM due to memory fragmentation. If you see this message ...") +
      Logged(
          "Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.64GiB with freed_by_count=0. The "
          "caller "
          "indicates that this is not a failure, but this may mean that there could be performance gains if "
          "more memory were available.") +
      Logged("Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to "
             "1073741824)requested "
             "by op Foo"));
  EXPECT_EQ(log.sub_allocator_failures.size(), 1u);
  EXPECT_EQ(log.sub_allocator_failures[0].line, 1);
  EXPECT_EQ(log.gc_warnings, 1);
  ASSERT_EQ(log.not_a_failure.size(), 1u);
  EXPECT_EQ(log.not_a_failure[0].line, 3);
  ASSERT_EQ(log.dumps.size(), 1u);
  EXPECT_EQ(log.dumps[0].header->op, "Foo");
  EXPECT_EQ(log.unmatched_lines, 0);
}

TEST(ParserTest, ALogWithoutADumpIsAnErrorNamingTheFile) {
  auto none = ParseBfcLog("hello\nworld\n# comment\n", "train.log");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(),
            "train.log: no BFC allocator dump found (3 lines, 2 not part of a dump)");
  auto missing = ReadBfcLogFile("/nonexistent/x.log");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/x.log: cannot read");
}

TEST(ParserTest, CarriageReturnsAndHeadLinesAreUnderstood) {
  const BfcLog log = ParseText(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824) from the "
      "lower "
      "end requested by op dot\r\n"
      "If this is caused by memory fragmentation, the environment variable "
      "'TF_GPU_ALLOCATOR=cuda_malloc_async' "
      "may improve the situation.\r\n"
      "Allocator memory summary: rounded request 1.00GiB, total free in pool 10.0KiB, largest free chunk "
      "usable by "
      "lower end 10.0KiB, unallocated bytes 0B, pool size 2.00GiB, pool limit 2.00GiB\r\n"
      "Allocator region growth hint: next region allocation target 4.00GiB (growth disabled; fixed-size "
      "pool; not "
      "an attempted allocation).\r\n"
      "Limit:                         2.00GiB\r\n");
  ASSERT_EQ(log.dumps.size(), 1u);
  EXPECT_EQ(log.dumps[0].header->form, HeaderForm::kHead);
  EXPECT_EQ(log.dumps[0].head_summary.size(), 2u);
  ASSERT_TRUE(log.dumps[0].head_memory.has_value());
  EXPECT_EQ(log.dumps[0].head_memory->free.text, "10.0KiB");
  EXPECT_EQ(log.dumps[0].head_memory->largest_free.approx_bytes, 10240u);
  EXPECT_EQ(log.dumps[0].head_memory->pool.approx_bytes, uint64_t{2} << 30);
  EXPECT_TRUE(log.dumps[0].stats.human_readable);
  EXPECT_EQ(log.dumps[0].stats.limit, uint64_t{2} << 30);
  EXPECT_EQ(log.unmatched_lines, 0);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
