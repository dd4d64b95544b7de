#include "trace/bfc_dump/heap.h"

#include <array>
#include <bit>
#include <map>

#include "allocator/core/units.h"
#include "fmt/format.h"
#include "trace/core/human_bytes.h"
#include "trace/layer.h"

namespace hbmsim::trace::bfc_dump {
namespace {

Bytes SumSizes(const Region& r) {
  Bytes total;
  for (const Chunk& c : r.chunks) total += Bytes(c.size);
  return total;
}

// Whole kPage pages inside [addr, addr + size).
uint64_t WholePages(uint64_t addr, uint64_t size) {
  const uint64_t first = (addr + kPage - 1) / kPage;
  const uint64_t end = (addr + size) / kPage;
  return end > first ? end - first : 0;
}

// TF <= 1.13 prints no region lines: there a jump forward in addresses is
// where one region ends and the next begins. Returns how many such jumps.
size_t InferredRegionBreaks(const Region& r) {
  if (r.size) return 0;
  size_t breaks = 0;
  for (size_t i = 1; i < r.chunks.size(); ++i) {
    breaks += r.chunks[i - 1].addr + r.chunks[i - 1].size < r.chunks[i].addr;
  }
  return breaks;
}

Check ContiguityCheck(const BfcDump& dump) {
  size_t pairs = 0, inferred = 0;
  for (const Region& r : dump.regions) {
    for (size_t i = 1; i < r.chunks.size(); ++i, ++pairs) {
      const Chunk& a = r.chunks[i - 1];
      const Chunk& b = r.chunks[i];
      const uint64_t end = a.addr + a.size;
      if (end == b.addr) continue;
      if (!r.size && end < b.addr) {
        ++inferred;
        continue;
      }
      return {"contiguity", false,
              fmt::format("line {}: chunk at {:#x} + {} ends at {:#x}, next chunk (line {}) starts at {:#x}",
                          a.line, a.addr, a.size, end, b.line, b.addr)};
    }
  }
  std::string detail = fmt::format("{} adjacent chunk pairs touch", pairs - inferred);
  if (inferred > 0) detail += fmt::format("; {} region boundaries inferred from address gaps", inferred);
  return {"contiguity", true, detail};
}

std::optional<Check> RegionEndsCheck(const BfcDump& dump) {
  size_t checked = 0;
  for (const Region& r : dump.regions) {
    for (size_t i = 0; i < r.chunks.size(); ++i) {
      const Chunk& c = r.chunks[i];
      if (!c.next) return std::nullopt;  // TF 1.x prints no handles
      const bool last = i + 1 == r.chunks.size();
      if (last != (*c.next == kNoNextChunk)) {
        return Check{"region ends", false,
                     fmt::format("line {}: next {} on the {} chunk of its region", c.line, *c.next,
                                 last ? "last" : "a non-last")};
      }
    }
    ++checked;
  }
  return Check{"region ends", true, fmt::format("{} region(s) end with next {}", checked, kNoNextChunk)};
}

std::optional<Check> BinsCheck(const BfcDump& dump) {
  if (dump.bins.empty()) return std::nullopt;
  std::array<uint64_t, kNumBins> total{}, in_use{};
  std::array<Bytes, kNumBins> bytes{};
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) {
      const int bin = BinNumForSize(c.size);
      ++total[bin];
      in_use[bin] += c.in_use;
      bytes[bin] += Bytes(c.size);
    }
  }
  for (const BinLine& b : dump.bins) {
    const int bin = BinNumForSize(b.bin_size);
    if (total[bin] != b.total_chunks || in_use[bin] != b.chunks_in_use) {
      return Check{
          "bins", false,
          fmt::format("line {}: Bin ({}) says {} chunks, {} in use; the chunk list has {}, {} in use", b.line,
                      b.bin_size, b.total_chunks, b.chunks_in_use, total[bin], in_use[bin])};
    }
    if (b.allocated && b.allocated->text != HumanReadableNumBytes(bytes[bin])) {
      return Check{"bins", false,
                   fmt::format("line {}: Bin ({}) says {} allocated for chunks; the chunk list has {}",
                               b.line, b.bin_size, b.allocated->text, HumanReadableNumBytes(bytes[bin]))};
    }
  }
  return Check{"bins", true, fmt::format("{} bin lines match the chunk list", dump.bins.size())};
}

std::optional<Check> SummaryCheck(const BfcDump& dump) {
  if (dump.summary.empty()) return std::nullopt;
  std::map<uint64_t, uint64_t> histogram;
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) {
      if (c.in_use) ++histogram[c.size];
    }
  }
  std::map<uint64_t, uint64_t> printed;
  for (const SummaryLine& s : dump.summary) printed[s.size] += s.count;
  if (printed == histogram) {
    return Check{"summary", true, fmt::format("{} distinct in-use sizes match", printed.size())};
  }
  for (const auto& [size, count] : histogram) {
    const auto it = printed.find(size);
    const uint64_t shown = it == printed.end() ? 0 : it->second;
    if (shown != count) {
      return Check{
          "summary", false,
          fmt::format("size {}: the summary says {} chunks, the chunk list has {}", size, shown, count)};
    }
  }
  return Check{"summary", false, "the summary lists sizes that no in-use chunk has"};
}

std::optional<Check> ChunkStateCheck(const BfcDump& dump) {
  if (dump.bin_for.size() != 1 || !dump.header || !dump.header->rounded) return std::nullopt;
  const int bin = BinNumForSize(*dump.header->rounded);
  size_t free_in_bin = 0;
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) free_in_bin += !c.in_use && BinNumForSize(c.size) == bin;
  }
  const size_t listed = dump.bin_for.front().chunks.size();
  return Check{"chunk state", listed == free_in_bin,
               fmt::format("{} chunk-state lines, {} free chunks in bin {}", listed, free_in_bin, bin)};
}

}  // namespace

int BinNumForSize(uint64_t bytes) {
  const uint64_t v = std::max<uint64_t>(bytes, 256) >> 8;
  return std::min(kNumBins - 1, static_cast<int>(std::bit_width(v)) - 1);
}

std::vector<std::string> ChunkListGaps(const BfcDump& dump) {
  std::vector<std::string> gaps;
  if (dump.regions.empty()) return {"no chunk lines"};
  if (dump.chunk_list_interrupted) gaps.push_back("lines are missing inside the chunk list (cut or elided)");
  Bytes region_total;
  bool sizes_known = true;
  for (const Region& r : dump.regions) {
    if (!r.size) {
      sizes_known = false;
      continue;
    }
    region_total += Bytes(*r.size);
    if (SumSizes(r).value() != *r.size) {
      gaps.push_back(fmt::format("the region of line {} has chunks for {} of its {} bytes", r.line,
                                 SumSizes(r).value(), *r.size));
    }
  }
  if (sizes_known && dump.pool && region_total.value() != dump.pool->pool_bytes) {
    gaps.push_back(fmt::format("the regions shown hold {} bytes, the pool {}", region_total.value(),
                               dump.pool->pool_bytes));
  }
  if (!sizes_known) {
    uint64_t listed = 0;
    for (const BinLine& b : dump.bins) listed += b.total_chunks;
    if (dump.bins.size() != kNumBins) {
      gaps.push_back("no region lines, and without all 21 bin lines the chunk count cannot be confirmed");
    } else if (listed != dump.ChunkCount()) {
      gaps.push_back(
          fmt::format("{} chunk lines, but the bin lines count {} chunks", dump.ChunkCount(), listed));
    }
  }
  return gaps;
}

Heap RebuildHeap(const BfcDump& dump) {
  Heap h;
  h.regions = dump.regions.size();
  for (const Region& r : dump.regions) h.regions += InferredRegionBreaks(r);
  Bytes pool, in_use, free;
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) {
      ++h.chunks;
      pool += Bytes(c.size);
      if (c.in_use) {
        ++h.in_use_chunks;
        in_use += Bytes(c.size);
        continue;
      }
      ++h.free_chunks;
      free += Bytes(c.size);
      h.largest_free = std::max(h.largest_free, c.size);
      h.free_pages_2mib += WholePages(c.addr, c.size);
    }
  }
  h.pool_bytes = pool.value();
  h.in_use_bytes = in_use.value();
  h.free_bytes = free.value();
  const Region* top = dump.regions.empty() ? nullptr : &dump.regions.back();
  if (top && !top->chunks.empty() && !top->chunks.back().in_use) h.tail_free = top->chunks.back().size;
  return h;
}

std::vector<Check> CheckConsistency(const BfcDump& dump, const Heap& heap) {
  std::vector<Check> checks = {ContiguityCheck(dump)};
  if (auto c = RegionEndsCheck(dump)) checks.push_back(*c);
  if (dump.pool) {
    checks.push_back(
        {"pool", heap.pool_bytes == dump.pool->pool_bytes,
         fmt::format("chunks sum to {}, pool line says {}", heap.pool_bytes, dump.pool->pool_bytes)});
  }
  if (dump.sum_total) {
    const std::string printed = HumanReadableNumBytes(Bytes(heap.in_use_bytes));
    checks.push_back(
        {"sum total", printed == dump.sum_total->text,
         fmt::format("in-use chunks sum to {}, Sum Total says {}", printed, dump.sum_total->text)});
  }
  if (dump.stats.in_use && !dump.stats.human_readable) {
    checks.push_back(
        {"in use", heap.in_use_bytes == *dump.stats.in_use,
         fmt::format("in-use chunks sum to {}, Stats InUse says {}", heap.in_use_bytes, *dump.stats.in_use)});
  }
  for (auto c : {BinsCheck(dump), SummaryCheck(dump), ChunkStateCheck(dump)}) {
    if (c) checks.push_back(*c);
  }
  return checks;
}

std::vector<BinCount> FreeChunkHistogram(const BfcDump& dump) {
  std::array<BinCount, kNumBins> bins{};
  for (const Region& r : dump.regions) {
    for (const Chunk& c : r.chunks) {
      if (c.in_use) continue;
      BinCount& b = bins[BinNumForSize(c.size)];
      ++b.count;
      b.bytes += c.size;
    }
  }
  std::vector<BinCount> out;
  for (int i = 0; i < kNumBins; ++i) {
    if (bins[i].count == 0) continue;
    bins[i].bin_size = BinSize(i);
    out.push_back(bins[i]);
  }
  return out;
}

}  // namespace hbmsim::trace::bfc_dump
