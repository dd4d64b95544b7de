#include "trace/xplane/region_sizes.h"

#include <algorithm>
#include <string>

#include "absl/container/btree_map.h"
#include "fmt/format.h"

namespace hbmsim::trace::xplane {
namespace {

constexpr int64_t kCap = int64_t{1} << 62;          // no device has more; hostile sums saturate here

// TF's TraceMe prints a double with 6 significant digits: compare as printed.
std::string SixDigits(double v) { return v == 0 ? "0" : fmt::format("{:.6g}", v); }

int64_t PlacedBytes(const std::vector<StartRegion>& placed) {
  int64_t sum = 0;
  for (const StartRegion& r : placed) sum = std::min(kCap, sum + r.size);
  return sum;
}

// The largest untouched region: the top set bit of what P leaves over, in 2 MiB units.
int64_t LargestUntouched(int64_t leftover) {
  int64_t size = 0;
  for (int64_t s = kFirstRegion; s <= leftover && s < kCap; s *= 2) size = s;
  return size;
}

// The widest free run inside [base, base + size) between the live chunks.
int64_t WidestFreeRun(const absl::btree_map<uint64_t, int64_t>& live, uint64_t base, int64_t size) {
  const uint64_t end = base + static_cast<uint64_t>(size);
  uint64_t at = base;
  int64_t widest = 0;
  for (auto it = live.lower_bound(base); it != live.end() && it->first < end; ++it) {
    if (it->first > at) widest = std::max(widest, static_cast<int64_t>(it->first - at));
    at = std::max(at, it->first + static_cast<uint64_t>(std::max<int64_t>(it->second, 0)));
  }
  if (end > at) widest = std::max(widest, static_cast<int64_t>(end - at));
  return widest;
}

}  // namespace

int64_t ReadingsReproduced(const AllocatorRecording& rec, const StartState& s,
                           const std::vector<StartChunk>& live_before, const std::vector<StartRegion>& placed,
                           int64_t pool) {
  absl::btree_map<uint64_t, int64_t> live;
  for (const StartChunk& c : live_before) live[c.addr] = c.size;
  const int64_t untouched = LargestUntouched(pool - PlacedBytes(placed));
  int64_t matched = 0;
  for (size_t i = 0; i < rec.records.size() && i < s.records.size(); ++i) {
    const MemoryRecord& r = rec.records[i];
    if (!r.addr) continue;  // bytes at unknown addresses (sampled.h)
    if (r.allocation) {
      live[*r.addr] = s.records[i].chunk_bytes;
    } else {
      live.erase(*r.addr);
    }
    if (!r.fragmentation || !r.bytes_allocated) continue;
    int64_t largest = untouched;
    for (const StartRegion& g : placed) largest = std::max(largest, WidestFreeRun(live, *g.base, g.size));
    const int64_t free = pool - *r.bytes_allocated;
    const double f = free > 0 ? static_cast<double>(free - largest) / static_cast<double>(free) : 0.0;
    matched += SixDigits(f) == SixDigits(*r.fragmentation);
  }
  return matched;
}

void WidenRegionsToReadings(const AllocatorRecording& rec, const StartState& s,
                            const std::vector<StartChunk>& live_before, int64_t pool,
                            std::vector<StartRegion>& regions) {
  if (rec.records.size() > kMaxRecordsForRegionSearch || regions.size() > kMaxRegionsForSearch) return;
  int64_t best = ReadingsReproduced(rec, s, live_before, regions, pool);
  for (size_t i = 0; i < regions.size(); ++i) {
    if (!regions[i].base || regions[i].end_recorded) continue;
    const uint64_t base = *regions[i].base;
    std::optional<uint64_t> next;  // the next region up: a region never runs into it
    for (const StartRegion& r : regions) {
      if (r.base && *r.base > base && (!next || *r.base < *next)) next = r.base;
    }
    std::vector<StartRegion> trial = regions;
    for (int64_t size = regions[i].size; size > 0 && size < kCap / 2;) {
      size *= 2;
      if (next && static_cast<uint64_t>(size) > *next - base) break;
      trial[i].size = size;
      if (PlacedBytes(trial) > pool) break;
      const int64_t matched = ReadingsReproduced(rec, s, live_before, trial, pool);
      if (matched > best) {
        best = matched;
        regions[i].size = size;
      }
    }
  }
}

}  // namespace hbmsim::trace::xplane
