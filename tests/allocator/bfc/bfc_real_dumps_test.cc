// Real data. shared/bfc_dumps/20.txt is a complete TF ~2.14 OOM dump of one
// 3502964736-byte region (allow_growth = false). Its chunk list is rebuilt in
// a BfcAllocator and the allocator must agree with TF on what the dump shows:
// the per-bin chunk counts of BinNumForSize, curr_region_allocation_bytes_,
// and the fragmentation verdict of the failing 614400000-byte request.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "sim/all_layers.h"
#include "tests/allocator/bfc/bfc_test_util.h"

namespace hbmsim::testing {
namespace {

struct DumpChunk {
  uint64_t address;
  uint64_t size;
  bool in_use;
};

struct DumpBin {
  uint64_t bin_size;
  int total;
  int in_use;
};

struct Dump {
  std::vector<DumpChunk> chunks;
  std::vector<DumpBin> bins;
};

Dump ReadDump20() {
  std::ifstream in(std::string(HBMSIM_SHARED_DIR) + "/bfc_dumps/20.txt");
  EXPECT_TRUE(in.good()) << "cannot open dump 20";
  const std::regex chunk(R"((InUse|Free ) at ([0-9a-f]+) of size (\d+) next \d+)");
  const std::regex bin(R"(Bin \((\d+)\):\s+Total Chunks: (\d+), Chunks in use: (\d+)\.)");
  Dump d;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    if (std::regex_search(line, m, chunk)) {
      d.chunks.push_back({std::stoull(m[2], nullptr, 16), std::stoull(m[3]), m[1] == "InUse"});
    } else if (std::regex_search(line, m, bin)) {
      d.bins.push_back({std::stoull(m[1]), std::stoi(m[2]), std::stoi(m[3])});
    }
  }
  return d;
}

TEST(BfcDump20Test, BinNumForSizeReproducesTheBinLines) {
  const Dump d = ReadDump20();
  ASSERT_EQ(d.chunks.size(), 383u);
  ASSERT_EQ(d.bins.size(), static_cast<size_t>(BfcAllocator::kNumBins));
  std::vector<int> total(BfcAllocator::kNumBins), in_use(BfcAllocator::kNumBins);
  for (const DumpChunk& c : d.chunks) {
    const int b = BfcAllocator::BinNumForSize(Bytes(c.size));
    ++total[b];
    in_use[b] += c.in_use ? 1 : 0;
  }
  for (int b = 0; b < BfcAllocator::kNumBins; ++b) {
    EXPECT_EQ(BfcAllocator::BinSize(b), Bytes(d.bins[b].bin_size));
    EXPECT_EQ(total[b], d.bins[b].total) << "bin " << b;
    EXPECT_EQ(in_use[b], d.bins[b].in_use) << "bin " << b;
  }
}

TEST(BfcDump20Test, RebuiltHeapFailsTheRequestAsFragmentationLikeTf) {
  const Dump d = ReadDump20();
  ASSERT_EQ(d.chunks.size(), 383u);
  BfcAllocator a(Limit(3502964736));
  // Allocating every chunk in address order cuts them from the low end of
  // the single region. With the recorded addresses (as --check-recorded
  // passes them) the region starts where TF's did, so every chunk lands at
  // its real address.
  std::vector<Handle> handles;
  for (size_t i = 0; i < d.chunks.size(); ++i) {
    AllocRequest req;
    req.id = BufferId(i + 1);
    req.bytes = Bytes(d.chunks[i].size);
    req.recorded_address = Offset(d.chunks[i].address);
    const AllocResult r = a.Allocate(req);
    ASSERT_TRUE(r.ok()) << "chunk " << i;
    ASSERT_EQ(r.offset, Offset(d.chunks[i].address)) << "chunk " << i;
    ASSERT_EQ(r.size.value(), d.chunks[i].size) << "chunk " << i;
    handles.push_back(r.handle);
  }
  for (size_t i = 0; i < d.chunks.size(); ++i) {
    if (!d.chunks[i].in_use) a.Free(handles[i]);
  }
  ASSERT_EQ(Blocks(a).size(), 383u);  // TF never leaves adjacent free chunks: nothing merged
  const AllocatorStats s = a.GetStats();
  EXPECT_EQ(s.bytes_in_use, 589212672);                            // InUse:
  EXPECT_EQ(s.pool_bytes, std::optional<int64_t>(3502964736));     // Total bytes in pool
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(7005929472));  // curr_region_allocation_bytes_
  const AllocResult r = Alloc(a, 1000, 614400000);
  EXPECT_EQ(r.status, AllocStatus::kFragmentation);
  EXPECT_EQ(r.rounded, Bytes(614400000));
  EXPECT_EQ(r.free_bytes, Bytes(2913752064));
  EXPECT_EQ(r.largest_free_block, Bytes(558759936));
  EXPECT_INVARIANTS(a);
}

// Dump 21 (TF ~2.1/2.2, allow_growth, limit 568351129) prints the pool line
// "total_region_allocated_bytes_: 568350976 ... available bytes: 153
// curr_region_allocation_bytes_: 1073741824". Growing from 2 MiB by doubling,
// eight regions of 2..256 MiB (534773760 bytes) leave floor256(33577369) =
// 33577216 for the ninth; curr doubles after each: 2 MiB << 9 = 1 GiB.
TEST(BfcDump21Test, GrowthReachesThePoolLineOfTheDump) {
  BfcOptions o = Limit(568351129);
  o.allow_growth = true;
  BfcAllocator a(o);
  uint64_t id = 0;
  while (Alloc(a, ++id, kMiB).ok()) {
  }
  EXPECT_EQ(a.GetStats().pool_bytes, std::optional<int64_t>(568350976));
  EXPECT_EQ(a.curr_region_allocation_bytes(), Bytes(1073741824));
  Counters c;
  a.AppendCounters(c);
  EXPECT_EQ(c[0], (Counter{"regions", 9}));
  // The last 1 MiB takes the final 1 MiB + 22784 chunk whole (below 2x, and
  // the 22784 remainder is below 128 MiB), so, as in the dump, InUse equals
  // the pool and the 115200-byte request fails as true exhaustion.
  EXPECT_EQ(a.GetStats().bytes_in_use, 568350976);
  const AllocResult r = Alloc(a, ++id, 115200);
  EXPECT_EQ(r.status, AllocStatus::kOom);
  EXPECT_EQ(r.rounded, Bytes(115200));
  EXPECT_EQ(r.free_bytes, Bytes(0));
}

}  // namespace
}  // namespace hbmsim::testing
