// The diagnose report, text and JSON, for a small complete dump and a partial one.
#include "trace/bfc_dump/render.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace hbmsim::trace::bfc_dump {
namespace {

constexpr char kSmallDump[] =
    "Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.0KiB (rounded to 3072)requested by op Add\n"
    "Next region of size 4096\n"
    "InUse at 7f0000000000 of size 1024 next 1\n"
    "Free  at 7f0000000400 of size 2048 next 2\n"
    "InUse at 7f0000000c00 of size 1024 next 18446744073709551615\n"
    "Total bytes in pool: 4096 memory_limit_: 4096 available bytes: 0 curr_region_allocation_bytes_: 8192\n"
    "InUse:                            2048\n";

TEST(RenderTest, TextReportOfACompleteDump) {
  const BfcLog log = ParseText(kSmallDump);
  const std::string text = RenderDiagnoseText(log, DiagnoseAll(log));
  EXPECT_EQ(
      text,
      "test.log: 1 BFC dump(s) in 7 lines (0 not part of a dump)\n"
      "\n"
      "dump 1 (lines 1-7), allocator GPU_0_bfc\n"
      "  request      3.0KiB, rounded to 3072 bytes, requested by op Add\n"
      "  verdict      oom: rounded request 3072 > free 2048 + unallocated 0\n"
      "  heap         rebuilt from 3 chunks in 1 region(s): pool 4096 (4.0KiB), in use 2048 (2.0KiB) in 2 "
      "chunks, free 2048 (2.0KiB) in 1 chunks, largest free chunk 2048 (2.0KiB)\n"
      "  limit        4096 (4.0KiB), unallocated 0 (0B)\n"
      "  check        contiguity   ok      2 adjacent chunk pairs touch\n"
      "  check        region ends  ok      1 region(s) end with next 18446744073709551615\n"
      "  check        pool         ok      chunks sum to 4096, pool line says 4096\n"
      "  check        in use       ok      in-use chunks sum to 2048, Stats InUse says 2048\n"
      "  free chunks by bin\n"
      "    bin    2.0KiB      1 chunks  2048 (2.0KiB)\n"
      "  what if\n"
      "    defragmented pool     does not fit\n"
      "    paged pool (2 MiB)    does not fit (0 free + 0 unallocated 2 MiB pages, 1 needed)\n"
      "    more limit            +3072 bytes for a new region; +3072 if it coalesces with the free top chunk "
      "(TF's VMM allocator)\n"
      "  missing      bin lines (0 of 21 shown)\n");
}

TEST(RenderTest, JsonReportOfAPartialDump) {
  const BfcLog log = ParseText(
      "failed to allocate 8.41G (9029127168 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 560.44MiB (rounded to 587661312)requested "
      "by op "
      "_EagerConst\n");
  const nlohmann::json j = nlohmann::json::parse(RenderDiagnoseJson(log, DiagnoseAll(log)));
  EXPECT_EQ(j["source"], "test.log");
  EXPECT_EQ(j["lines"], 2);
  EXPECT_EQ(j["sub_allocator_failures"][0]["bytes"], 9029127168u);
  ASSERT_EQ(j["dumps"].size(), 1u);
  const nlohmann::json& d = j["dumps"][0];
  EXPECT_EQ(d["allocator"], "GPU_0_bfc");
  EXPECT_EQ(d["request"], "560.44MiB");
  EXPECT_EQ(d["rounded"], 587661312u);
  EXPECT_EQ(d["op"], "_EagerConst");
  EXPECT_EQ(d["verdict"], "unknown");
  EXPECT_EQ(d["heap_rebuilt"], false);
  EXPECT_TRUE(d["free_bytes"].is_null());
  EXPECT_TRUE(d["what_if"]["fits_after_defrag"].is_null());
  EXPECT_EQ(d["what_if"]["pages_needed"], 281u);
  EXPECT_EQ(d["missing"].size(), 4u);
  EXPECT_EQ(d["missing"][0], "a complete chunk list: no chunk lines");
}

TEST(RenderTest, JsonOfDump20CarriesTheVerdictAndNumbers) {
  const BfcLog log = LoadSharedDump("20.txt");
  const nlohmann::json d = nlohmann::json::parse(RenderDiagnoseJson(log, DiagnoseAll(log)))["dumps"][0];
  EXPECT_EQ(d["verdict"], "fragmentation");
  EXPECT_EQ(d["chunks"], 383u);
  EXPECT_EQ(d["largest_free_chunk"], 558759936u);
  EXPECT_EQ(d["free_bytes"], 2913752064u);
  EXPECT_EQ(d["what_if"]["fits_after_defrag"], true);
  EXPECT_EQ(d["what_if"]["fits_paged"], true);
  EXPECT_EQ(d["checks"].size(), 8u);
  EXPECT_EQ(d["free_histogram"].size(), 15u);
}

// Most bins of a real dump are empty (15 of 21 in shared/bfc_dumps/21.txt):
// the text folds them into one line where the bin lines end, neighbouring
// lines as a range; a line with no chunk but bytes allocated is not empty and
// stays on its own. The JSON keeps every bin.
TEST(RenderTest, EmptyBinsFoldIntoOneLine) {
  const auto bin = [](uint64_t size, const char* counts, const char* bytes) {
    return std::string("Bin (") + std::to_string(size) + "): \tTotal Chunks: " + counts + ". " + bytes +
           " allocated for chunks. " + bytes + " in use in bin. " + bytes + " client-requested in use in bin.\n";
  };
  const BfcLog log = ParseText(
      "Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.0KiB (rounded to 3072)requested by op Add\n" +
      bin(256, "2, Chunks in use: 2", "512B") + bin(512, "0, Chunks in use: 0", "0B") +
      bin(1024, "0, Chunks in use: 0", "0B") + bin(2048, "1, Chunks in use: 1", "2.0KiB") +
      bin(4096, "0, Chunks in use: 0", "4.0KiB") + bin(8192, "0, Chunks in use: 0", "0B"));
  const std::string text = RenderDiagnoseText(log, DiagnoseAll(log));
  const std::string bins =
      "    seen     bin 256B                   2 chunks, 2 in use; 512B allocated, 512B in use, 512B requested  "
      "(line 2)\n"
      "    seen     bin 2.0KiB                 1 chunks, 1 in use; 2.0KiB allocated, 2.0KiB in use, 2.0KiB "
      "requested  (line 5)\n"
      "    seen     bin 4.0KiB                 0 chunks, 0 in use; 4.0KiB allocated, 4.0KiB in use, 4.0KiB "
      "requested  (line 6)\n"
      "    seen     3 empty bins               512B-1.0KiB, 8.0KiB: 0 chunks  (lines 3-7)\n";
  EXPECT_NE(text.find(bins), std::string::npos) << text;
  EXPECT_EQ(text.find("seen     bin 512B"), std::string::npos) << text;
  const nlohmann::json d = nlohmann::json::parse(RenderDiagnoseJson(log, DiagnoseAll(log)))["dumps"][0];
  size_t bin_figures = 0;
  for (const nlohmann::json& f : d["figures"]) bin_figures += f["what"].get<std::string>().starts_with("bin ");
  EXPECT_EQ(bin_figures, 6u);
}

}  // namespace
}  // namespace hbmsim::trace::bfc_dump
