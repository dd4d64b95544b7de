#include "trace/xplane/grown_layout.h"

#include <algorithm>

#include "absl/container/btree_map.h"
#include "fmt/format.h"
#include "trace/xplane/region_doubling.h"
#include "trace/xplane/region_sizes.h"

namespace hbmsim::trace::xplane {

// The pool estimates vote in MiB.
constexpr int64_t kPoolVoteUnit = 1 << 20;

// P from consecutive fragmentation readings f0, f1 (in use i0, i1, chunk c):
// the free bytes outside the largest chunk, f·(P − in_use), either stay put
// (the chunk came from or went to the largest) or move by c.
std::optional<int64_t> EstimatePool(const AllocatorRecording& rec, const StartState& s) {
  absl::btree_map<int64_t, int> votes;  // MiB -> pairs
  for (size_t i = 1; i < rec.records.size(); ++i) {
    const MemoryRecord& a = rec.records[i - 1];
    const MemoryRecord& b = rec.records[i];
    if (!a.fragmentation || !b.fragmentation || !a.bytes_allocated || !b.bytes_allocated) continue;
    const double f0 = *a.fragmentation, f1 = *b.fragmentation;
    if (f0 <= 0 || f1 <= 0 || f0 == f1) continue;
    const double i0 = static_cast<double>(*a.bytes_allocated), i1 = static_cast<double>(*b.bytes_allocated);
    const double c = static_cast<double>(s.records[i].chunk_bytes) * (b.allocation ? 1 : -1);
    for (const double moved : {0.0, -c}) {
      const double p = (f1 * i1 - f0 * i0 + moved) / (f1 - f0);
      if (p > std::max(i0, i1) && p < 9.0e18) ++votes[static_cast<int64_t>(p / kPoolVoteUnit + 0.5)];
    }
  }
  std::optional<int64_t> best;
  int best_votes = 2;  // at least 3 pairs agree
  for (const auto& [mib, n] : votes) {
    if (n > best_votes) {
      best = mib * kPoolVoteUnit;
      best_votes = n;
    }
  }
  return best;
}

namespace {

// The region of 2 MiB·2^k bytes that spans [begin, end) from begin.
int64_t RegionSpanning(uint64_t begin, uint64_t end) {
  constexpr int64_t kLargest = int64_t{1} << 62;  // no device has more; keeps hostile spans finite
  int64_t size = kFirstRegion;
  while (static_cast<uint64_t>(size) < end - begin && size < kLargest) size *= 2;
  return size;
}

// Touched ranges whose regions do not overlap, merged into clusters.
std::vector<Range> ClustersOfTouched(const std::vector<Range>& touched) {
  std::vector<Range> clusters;
  for (const Range& r : touched) {
    if (!clusters.empty() && clusters.back().begin + static_cast<uint64_t>(RegionSpanning(
                                                         clusters.back().begin, clusters.back().end)) >
                                 r.begin) {
      clusters.back().end = std::max(clusters.back().end, r.end);
    } else {
      clusters.push_back(r);
    }
  }
  return clusters;
}

// One region per cluster (s.regions), and the live chunks of unknown bytes
// U (`left`, what is still to place) implies in it: below a cluster that
// starts past a 2 MiB boundary, in the untouched gaps, after an unsplit end.
std::vector<StartChunk> PlaceGrownClusters(const std::vector<Range>& clusters, const std::vector<Range>& touched,
                                           const std::vector<uint64_t>& unsplit_ends, int64_t& left,
                                           StartState& s) {
  std::vector<StartChunk> live;
  uint64_t prev_end = 0;
  for (const Range& c : clusters) {
    // Device memory comes 2 MiB-aligned: a cluster starting past such a
    // boundary has live bytes below it in its region, when U can hold them.
    uint64_t base = c.begin;
    const uint64_t aligned = c.begin / kFirstRegion * kFirstRegion;
    if (aligned < c.begin && aligned >= prev_end && static_cast<int64_t>(c.begin - aligned) <= left &&
        c.end - aligned <= static_cast<uint64_t>(RegionSpanning(c.begin, c.end))) {
      live.push_back({aligned, static_cast<int64_t>(c.begin - aligned), StartChunkKind::kUnknown, 0});
      left -= static_cast<int64_t>(c.begin - aligned);
      base = aligned;
    }
    const int64_t size = RegionSpanning(base, c.end);
    prev_end = base + static_cast<uint64_t>(size);
    s.regions.push_back({base, size, 0, false});
    // Untouched gaps inside the cluster: live while U lasts.
    for (size_t i = 1; i < touched.size(); ++i) {
      if (touched[i].begin <= c.begin || touched[i].begin > c.end) continue;
      const int64_t gap = static_cast<int64_t>(touched[i].begin - touched[i - 1].end);
      if (gap > 0 && gap <= left) {
        live.push_back({touched[i - 1].end, gap, StartChunkKind::kUnknown, 0});
        left -= gap;
      }
    }
    // The region runs from its base (not the cluster's first address): the
    // tail is what lies between the cluster's end and the region's.
    const int64_t tail = static_cast<int64_t>(base + static_cast<uint64_t>(size) - c.end);
    const bool ended_there = std::find(unsplit_ends.begin(), unsplit_ends.end(), c.end) != unsplit_ends.end();
    if (tail > 0 && ended_there && tail <= left) {
      live.push_back({c.end, tail, StartChunkKind::kUnknown, 0});
      left -= tail;
    }
    // A chunk handed out whole ends exactly where the region does: the free
    // chunk it came from ended there, so the region is no larger.
    s.regions.back().end_recorded = tail == 0 && ended_there;
  }
  return live;
}

// Every placed region tiled: the live chunks (sorted by address), free space between them.
void TileGrownRegions(const std::vector<StartChunk>& live, StartState& s) {
  size_t next = 0;
  for (const StartRegion& r : s.regions) {
    uint64_t at = *r.base;
    const uint64_t end = *r.base + static_cast<uint64_t>(r.size);
    for (; next < live.size() && live[next].addr < end; ++next) {
      const StartChunk& c = live[next];
      if (c.addr < at) continue;  // overlapping records: noted by the flat layout's rule, kept out here
      if (c.addr > at) s.chunks.push_back({at, static_cast<int64_t>(c.addr - at), StartChunkKind::kHole, 0});
      s.chunks.push_back(c);
      at = c.addr + static_cast<uint64_t>(c.size);
    }
    if (at < end) s.chunks.push_back({at, static_cast<int64_t>(end - at), StartChunkKind::kHole, 0});
  }
}

// What the recording never touches: U's rest (`left`) in a region of its
// own, and free regions making up the pool the fragmentation readings tell;
// then the regions smallest first.
void AddUntouchedRegions(int64_t left, StartState& s) {
  constexpr int64_t kCap = int64_t{1} << 62;  // saturate: hostile region sums must not wrap
  int64_t pool = 0;
  for (const StartRegion& r : s.regions) pool = std::min(kCap, pool + r.size);
  if (left > 0) {
    s.regions.push_back({std::nullopt, RegionSpanning(0, static_cast<uint64_t>(left)), left, false});
    pool = std::min(kCap, pool + s.regions.back().size);
  }
  for (int64_t free = *s.pool_estimate - pool; free >= kFirstRegion;) {
    int64_t size = kFirstRegion;
    while (size <= free / 2) size *= 2;
    s.regions.push_back({std::nullopt, size, 0, false});
    free -= size;
  }
  std::stable_sort(s.regions.begin(), s.regions.end(),
                   [](const StartRegion& a, const StartRegion& b) { return a.size < b.size; });
}

// Sizes the regions can have been made with (region_doubling.h), searched only
// where the readings' search runs too (region_sizes.h): a hostile file stays
// fast. A pool of an odd number of MiB can only have grown from a 1 MiB first
// region; otherwise from REF's 2 MiB, the pool rounded down to it.
std::optional<DoublingLayout> LayOutForDoubling(int64_t left, StartState& s) {
  if (s.regions.size() > kMaxRegionsForSearch) return std::nullopt;
  const int64_t pool = *s.pool_estimate;
  if (pool % kFirstRegion != 0 && pool % kOldFirstRegion == 0) {
    if (std::optional<DoublingLayout> l = LayOutByDoubling(s.regions, left, pool, kOldFirstRegion)) {
      s.first_region = kOldFirstRegion;
      s.notes.push_back(fmt::format(
          "the fragmentation readings' pool of {} bytes is an odd number of MiB: regions grown from a 1 MiB "
          "first one (first_region=1048576, as in TF 1.x-2.1), not REF's 2 MiB",
          pool));
      return l;
    }
  }
  const int64_t target = pool / kFirstRegion * kFirstRegion;
  if (target != pool) {
    s.notes.push_back(fmt::format(
        "the fragmentation readings' pool of {} bytes is not a multiple of 2 MiB, which regions grown from a "
        "2 MiB first one never sum to: the layout holds {}",
        pool, target));
  }
  return LayOutByDoubling(s.regions, left, target, kFirstRegion);
}

}  // namespace

// allow_growth: one region per cluster of touched addresses (start_state.h).
void LayOutGrown(const AllocatorRecording& rec, const std::vector<Range>& touched,
                 const std::vector<uint64_t>& unsplit_ends, StartState& s) {
  std::vector<StartChunk> known = std::move(s.chunks);
  s.chunks.clear();
  int64_t left = s.unknown_bytes;
  std::vector<StartChunk> live = PlaceGrownClusters(ClustersOfTouched(touched), touched, unsplit_ends, left, s);
  s.unknown_elsewhere = left;
  live.insert(live.end(), known.begin(), known.end());
  std::sort(live.begin(), live.end(),
            [](const StartChunk& a, const StartChunk& b) { return a.addr < b.addr; });
  // A region may be larger than what its chunks span: the readings say (region_sizes.h).
  WidenRegionsToReadings(rec, s, live, *s.pool_estimate, s.regions);
  // And the regions must be ones BFC's doubling makes, or its replay makes others (region_doubling.h).
  const std::optional<DoublingLayout> doubled = LayOutForDoubling(left, s);
  if (doubled) {
    for (size_t i = 0; i < s.regions.size(); ++i) s.regions[i].size = doubled->placed_sizes[i];
  }
  TileGrownRegions(live, s);
  if (doubled) {
    s.regions.insert(s.regions.end(), doubled->untouched.begin(), doubled->untouched.end());
    std::stable_sort(s.regions.begin(), s.regions.end(),
                     [](const StartRegion& a, const StartRegion& b) { return a.size < b.size; });
  } else {
    s.notes.push_back(fmt::format(
        "no layout of the {} placed regions found that BFC's doubling makes: regions as the readings say",
        s.regions.size()));
    AddUntouchedRegions(left, s);
  }
  const size_t placed = static_cast<size_t>(std::count_if(
      s.regions.begin(), s.regions.end(), [](const StartRegion& r) { return r.base.has_value(); }));
  s.notes.push_back(fmt::format(
      "the fragmentation readings say the pool held {} bytes, less than the limit: regions grown on demand "
      "(allow_growth), {} placed from the addresses and {} the recording never touches{}",
      *s.pool_estimate, placed, s.regions.size() - placed,
      left > 0 ? fmt::format(" ({} live bytes in them)", left) : ""));
}

}  // namespace hbmsim::trace::xplane
