#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "allocator/bfc/bfc_allocator.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/engine/replay_engine.h"
#include "sim/policies/bfc/bfc_dump.h"
#include "sim/dumps/memory_map_text.h"
#include "sim/report/placements_writer.h"
#include "sim/report/replay_recorder.h"
#include "sim/report/replay_report.h"
#include "sim/dumps/stats_text.h"
#include "tests/sim/engine/fake_allocator.h"
#include "tests/sim/engine/vector_reader.h"

namespace hbmsim {
namespace {

using testing::FakeAllocator;
using testing::VectorReader;

TEST(StatsTextTest, EightLinesOf38Columns) {
  AllocatorStats s;
  s.bytes_limit = 3502964736;
  s.bytes_in_use = 589212672;
  s.peak_bytes_in_use = 3288551168;
  s.num_allocs = 469363;
  s.largest_alloc_size = 1228800000;
  s.largest_free_block_bytes = 558759936;
  // Dump 20 of shared/bfc_dumps, except the true LargestFreeBlock.
  EXPECT_EQ(StatsDebugString(s),
            "Limit:                      3502964736\n"
            "InUse:                       589212672\n"
            "MaxInUse:                   3288551168\n"
            "NumAllocs:                      469363\n"
            "MaxAllocSize:               1228800000\n"
            "Reserved:                            0\n"
            "PeakReserved:                        0\n"
            "LargestFreeBlock:            558759936\n");
}

// alloc 1 1000, alloc 2 1000, alloc 3 1000, free 2 on a 4 KiB BFC (one region).
std::unique_ptr<BfcAllocator> SmallBfc() {
  BfcOptions o;
  o.memory_limit = Bytes(4096);
  auto bfc = std::make_unique<BfcAllocator>(o);
  Handle h[3];
  for (int i = 0; i < 3; ++i) {
    AllocRequest r;
    r.id = BufferId(i + 1);
    r.bytes = Bytes(1000);
    h[i] = bfc->Allocate(r).handle;
  }
  bfc->Free(h[1]);
  return bfc;
}

TEST(BfcDumpTest, FollowsDumpMemoryLogLineForLine) {
  auto bfc = SmallBfc();
  const std::string dump = BfcDumpMemoryLog(*bfc, "bfc", Bytes(2048));
  std::istringstream in(dump);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1u + 21 + 1 + 1 + 4 + 1 + 1 + 1 + 1 + 1 + 8);
  EXPECT_EQ(lines[0], "BFCAllocator dump for bfc");
  EXPECT_EQ(lines[1],
            "Bin (256): \tTotal Chunks: 0, Chunks in use: 0. 0B allocated for chunks. 0B in use in bin. 0B "
            "client-requested in use in bin.");
  EXPECT_EQ(lines[3],
            "Bin (1024): \tTotal Chunks: 4, Chunks in use: 2. 4.0KiB allocated for chunks. 2.0KiB in use "
            "in bin. 2.0KiB client-requested in use in bin.");
  EXPECT_EQ(lines[21],
            "Bin (268435456): \tTotal Chunks: 0, Chunks in use: 0. 0B allocated for chunks. 0B in use in "
            "bin. 0B client-requested in use in bin.");
  EXPECT_EQ(lines[22], "Bin for 2.0KiB was 2.0KiB, Chunk State: ");
  EXPECT_EQ(lines[23], "Next region of size 4096");
  EXPECT_EQ(lines[24].substr(0, 20), "InUse at 0 of size 1");
  EXPECT_EQ(lines[25].substr(0, 28), "Free  at 400 of size 1024 ne");
  EXPECT_EQ(lines[27].substr(0, 26), "Free  at c00 of size 1024 ");
  EXPECT_EQ(lines[27].substr(lines[27].size() - 25), "next 18446744073709551615");
  EXPECT_EQ(lines[28], "     Summary of in-use Chunks by size: ");
  EXPECT_EQ(lines[29], "2 Chunks of size 1024 totalling 2.0KiB");
  EXPECT_EQ(lines[30], "Sum Total of in-use chunks: 2.0KiB");
  EXPECT_EQ(
      lines[31],
      "Total bytes in pool: 4096 memory_limit_: 4096 available bytes: 0 curr_region_allocation_bytes_: 8192");
  EXPECT_EQ(lines[32], "Stats: ");
  EXPECT_EQ(lines[33], "Limit:                            4096");
  EXPECT_EQ(lines[40], "LargestFreeBlock:                 1024");
}

TEST(BfcDumpTest, ListsTheFreeChunksOfTheRequestBinWithNeighbours) {
  auto bfc = SmallBfc();
  const std::string dump = BfcDumpMemoryLog(*bfc, "bfc", Bytes(1024));
  EXPECT_NE(
      dump.find("Bin for 1.0KiB was 1.0KiB, Chunk State: \n"
                "  Size: 1.0KiB | Requested Size: 1000B | in_use: 0 | bin_num: 2, prev:   Size: 1.0KiB | "
                "Requested Size: 1000B | in_use: 1 | bin_num: -1, next:   Size: 1.0KiB | Requested Size: "
                "1000B | in_use: 1 | bin_num: -1\n"
                "  Size: 1.0KiB | Requested Size: "),
      std::string::npos)
      << dump;
}

TEST(MemoryMapTextTest, ListsRegionsAndBlocks) {
  FakeAllocator a(Bytes(2048));
  AllocRequest r;
  r.id = BufferId(7);
  r.bytes = Bytes(1000);
  a.Allocate(r);
  EXPECT_EQ(MemoryMapText(a),
            "Memory map of fake: 1 region\n"
            "Region 0 at 0 of size 2048\n"
            "  InUse    at 0 of size 1024 requested 1000 id 7\n"
            "  Free     at 400 of size 1024\n");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Replayed {
  std::unique_ptr<FakeAllocator> allocator;
  ReplaySummary summary;
  std::unique_ptr<ReplayRecorder> recorder;
  AllocatorConfig config;
  ReplayReportInput input;
};

// Replays on the fake allocator with a 2 KiB limit, writing placements to `csv`.
void ReplayFake(Replayed& r, std::vector<std::string> lines, const std::string& csv) {
  r.allocator = std::make_unique<FakeAllocator>(Bytes(2048));
  r.recorder = std::make_unique<ReplayRecorder>(*r.allocator, *BuiltinPolicies().Find("bfc"));
  auto out = io::OutputFile::Create(csv);
  ASSERT_TRUE(out.ok()) << out.status();
  PlacementsWriter writer(**out);
  VectorReader reader(std::move(lines));
  ReplayEngine engine(*r.allocator, {});
  engine.AddObserver(r.recorder.get());
  engine.AddObserver(&writer);
  absl::StatusOr<ReplaySummary> s = engine.Run(reader);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE((*out)->Commit().ok());
  r.summary = *s;
  r.config = DefaultConfig(*BuiltinPolicies().Find("bfc"));
  r.input.trace = "t.trace";
  r.input.limit_source = "--bytes-limit";
  r.input.bytes_limit = Bytes(2048);
  r.input.config = &r.config;
  r.input.allocator = r.allocator.get();
  r.input.summary = &r.summary;
  r.input.recorder = r.recorder.get();
}

const std::vector<std::string> kTrace = {"alloc 1 1000", "alloc 2 0", "mark step=7",
                                         "alloc 3 1500", "free 3",    "alloc 4 500"};

TEST(PlacementsWriterTest, OneRowPerAllocInTraceOrder) {
  const std::string csv = ::testing::TempDir() + "/placements.csv";
  Replayed r;
  ReplayFake(r, kTrace, csv);
  EXPECT_EQ(ReadFile(csv),
            "event,id,requested,status,offset,size\n"
            "0,1,1000,ok,0,1024\n"
            "1,2,0,ok,,0\n"
            "3,3,1500,oom,,0\n"
            "5,4,500,ok,1024,512\n");
}

TEST(PlacementsWriterTest, AWriteErrorIsReportedByFinish) {
  auto out = io::OutputFile::Create("/dev/full");
  ASSERT_TRUE(out.ok()) << out.status();
  PlacementsWriter writer(**out);
  Event e;
  e.id = 1;
  e.bytes = Bytes(8);
  for (uint64_t i = 0; i < 10000; ++i) writer.OnAlloc(EventIndex(i), e, AllocResult{});
  EXPECT_EQ(writer.Finish().message(), "cannot write /dev/full: No space left on device");
}

TEST(JsonReportTest, HasTheContractKeysWithExactValues) {
  Replayed r;
  ReplayFake(r, kTrace, ::testing::TempDir() + "/p2.csv");
  const nlohmann::ordered_json j = JsonReport(r.input);
  EXPECT_EQ(j["allocator"]["name"], "bfc");
  EXPECT_EQ(
      j["allocator"]["options"].dump(),
      R"({"allow_growth":false,"garbage_collection":false,"fragmentation_fraction":0.0,"region_coalescing":false,)"
      R"("first_region":2097152})");
  EXPECT_EQ(j["stats"].dump(),
            R"({"num_allocs":2,"bytes_in_use":1536,"peak_bytes_in_use":1536,"largest_alloc_size":1024,)"
            R"("bytes_limit":2048,"bytes_reserved":0,"peak_bytes_reserved":0,"bytes_reservable_limit":null,)"
            R"("largest_free_block_bytes":512,"pool_bytes":2048,"peak_pool_bytes":2048})");
  EXPECT_EQ(j["failures"].dump(),
            R"([{"event":3,"id":3,"requested":1500,"rounded":1536,"kind":"oom","free_bytes":1024,)"
            R"("largest_free_block_bytes":1024,"after_mark":"step=7"}])");
  EXPECT_EQ(j["peak_live_bytes"], 2500);
  EXPECT_FALSE(j.contains("recorded_check"));
  EXPECT_EQ(j["counters"].dump(), R"({"fake_frees":0})");
}

TEST(TextReportTest, ListsFailuresAndTheDumpAtTheFirstOne) {
  Replayed r;
  ReplayFake(r, kTrace, ::testing::TempDir() + "/p3.csv");
  const std::string text = TextReport(r.input);
  EXPECT_NE(text.find("  outcome:    1 of 4 allocations failed (1 oom, 0 fragmentation)\n"),
            std::string::npos);
  EXPECT_NE(text.find("Peak live bytes (the lower bound no allocator can beat): 2500 (2.4KiB) at event 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("           3          3           1500           1536  oom                     1024"
                      "           1024  after mark step=7\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Memory at the first failure (event 3, id 3):\nMemory map of fake: 1 region\n"),
            std::string::npos);
}

}  // namespace
}  // namespace hbmsim
