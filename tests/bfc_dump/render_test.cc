// The diagnose report, text and JSON, for a small complete dump and a partial one.
#include "trace/bfc_dump/render.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace hbmsim::bfc_dump {
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

}  // namespace
}  // namespace hbmsim::bfc_dump
