#include "sim/policies/bfc/bfc_dump.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <vector>

#include "fmt/format.h"
#include "sim/dumps/memory_snapshot.h"
#include "sim/dumps/stats_text.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using Out = std::back_insert_iterator<std::string>;

// TF's get_bin_debug_info(): every chunk counts in the bin its size maps to,
// in-use chunks included, although only free chunks live in bins.
struct BinTotals {
  int64_t chunks = 0;
  int64_t chunks_in_use = 0;
  Bytes bytes;
  Bytes bytes_in_use;
  Bytes requested_in_use;
};

std::array<BinTotals, BfcAllocator::kNumBins> CountBins(const std::vector<RegionSnapshot>& regions) {
  std::array<BinTotals, BfcAllocator::kNumBins> bins{};
  for (const RegionSnapshot& r : regions) {
    for (const BlockInfo& b : r.blocks) {
      BinTotals& t = bins[BfcAllocator::BinNumForSize(b.size)];
      ++t.chunks;
      t.bytes += b.size;
      if (!IsHeld(b)) continue;
      ++t.chunks_in_use;
      t.bytes_in_use += b.size;
      t.requested_in_use += b.requested;
    }
  }
  return bins;
}

void WriteBinLines(Out out, const std::vector<RegionSnapshot>& regions) {
  const auto bins = CountBins(regions);
  for (int i = 0; i < BfcAllocator::kNumBins; ++i) {
    const BinTotals& t = bins[i];
    fmt::format_to(
        out,
        "Bin ({}): \tTotal Chunks: {}, Chunks in use: {}. {} allocated for chunks. {} in use in bin. {} "
        "client-requested in use in bin.\n",
        BfcAllocator::BinSize(i).value(), t.chunks, t.chunks_in_use, HumanReadableNumBytes(t.bytes),
        HumanReadableNumBytes(t.bytes_in_use), HumanReadableNumBytes(t.requested_in_use));
  }
}

// Chunk::DebugString(a, recurse=false): a free chunk shows its bin, an in-use one -1.
std::string ChunkState(const BlockInfo& b) {
  const int bin = IsHeld(b) ? -1 : BfcAllocator::BinNumForSize(b.size);
  return fmt::format("  Size: {} | Requested Size: {} | in_use: {} | bin_num: {}",
                     HumanReadableNumBytes(b.size), HumanReadableNumBytes(b.requested), IsHeld(b) ? 1 : 0,
                     bin);
}

// "Bin for <rounded> was <bin size>, Chunk State: " and the free chunks of that
// bin in the bin's order (size, then address), each with its neighbours.
void WriteChunkState(Out out, const std::vector<RegionSnapshot>& regions, Bytes rounded) {
  const int bin = BfcAllocator::BinNumForSize(rounded);
  fmt::format_to(out, "Bin for {} was {}, Chunk State: \n", HumanReadableNumBytes(rounded),
                 HumanReadableNumBytes(BfcAllocator::BinSize(bin)));
  struct Entry {
    const RegionSnapshot* region;
    size_t index;
  };
  std::vector<Entry> in_bin;
  for (const RegionSnapshot& r : regions) {
    for (size_t i = 0; i < r.blocks.size(); ++i) {
      const BlockInfo& b = r.blocks[i];
      if (!IsHeld(b) && BfcAllocator::BinNumForSize(b.size) == bin) in_bin.push_back({&r, i});
    }
  }
  std::sort(in_bin.begin(), in_bin.end(), [](const Entry& x, const Entry& y) {
    const BlockInfo& a = x.region->blocks[x.index];
    const BlockInfo& b = y.region->blocks[y.index];
    return std::pair(a.size, a.offset) < std::pair(b.size, b.offset);
  });
  for (const Entry& e : in_bin) {
    const std::vector<BlockInfo>& blocks = e.region->blocks;
    std::string line = ChunkState(blocks[e.index]);
    if (e.index > 0) line += ", prev: " + ChunkState(blocks[e.index - 1]);
    if (e.index + 1 < blocks.size()) line += ", next: " + ChunkState(blocks[e.index + 1]);
    fmt::format_to(out, "{}\n", line);
  }
}

// The chunk list per region, then the in-use histogram; returns its total.
Bytes WriteChunksAndSummary(Out out, const std::vector<RegionSnapshot>& regions) {
  std::map<uint64_t, int64_t> in_use_by_size;
  for (const RegionSnapshot& r : regions) {
    fmt::format_to(out, "Next region of size {}\n", r.region.size.value());
    for (const BlockInfo& b : r.blocks) {
      if (IsHeld(b)) ++in_use_by_size[b.size.value()];
      fmt::format_to(out, "{} at {:x} of size {} next {}\n", IsHeld(b) ? "InUse" : "Free ", b.offset.value(),
                     b.size.value(), b.next_handle);
    }
  }
  fmt::format_to(out, "     Summary of in-use Chunks by size: \n");
  Bytes total;
  for (const auto& [size, count] : in_use_by_size) {
    const Bytes bytes(size * static_cast<uint64_t>(count));
    fmt::format_to(out, "{} Chunks of size {} totalling {}\n", count, size, HumanReadableNumBytes(bytes));
    total += bytes;
  }
  return total;
}

}  // namespace

std::string BfcDumpMemoryLog(const BfcAllocator& bfc, std::string_view name, Bytes rounded) {
  const std::vector<RegionSnapshot> regions = TakeMemorySnapshot(bfc);
  const AllocatorStats stats = bfc.GetStats();
  std::string text;
  Out out(text);
  fmt::format_to(out, "BFCAllocator dump for {}\n", name);
  WriteBinLines(out, regions);
  WriteChunkState(out, regions, rounded);
  const Bytes in_use = WriteChunksAndSummary(out, regions);
  fmt::format_to(out, "Sum Total of in-use chunks: {}\n", HumanReadableNumBytes(in_use));
  const int64_t pool = stats.pool_bytes.value_or(0);
  const int64_t limit = static_cast<int64_t>(bfc.memory_limit().value());
  fmt::format_to(
      out,
      "Total bytes in pool: {} memory_limit_: {} available bytes: {} curr_region_allocation_bytes_: {}\n",
      pool, limit, limit - pool, bfc.curr_region_allocation_bytes().value());
  fmt::format_to(out, "Stats: \n{}", StatsDebugString(stats));
  return text;
}

}  // namespace hbmsim::sim
