#include "sim/policies/torch/torch_state_analysis.h"

#include <algorithm>
#include <map>
#include <utility>

namespace hbmsim::sim::torch {
namespace {

// A segment as the walk announces it (expandable: its whole VA range). Its
// stream is its blocks' (every block of a torch segment, free and unmapped
// ones included, carries the segment's stream).
struct Segment {
  Offset base;
  Bytes size;
  StreamId stream;
  bool small = false;
  bool expandable = false;
};

// Collects every region and its blocks, in base order.
class Blocks : public MemoryMapVisitor {
 public:
  void OnRegion(const RegionInfo& r) override {
    segments.push_back({r.base, r.size, StreamId(0), r.small_pool, r.expandable});
    regions.emplace_back();
  }
  void OnBlock(const BlockInfo& b) override {
    if (regions.back().empty()) segments.back().stream = StreamId(b.stream);
    regions.back().push_back(b);
  }
  std::vector<Segment> segments;
  std::vector<std::vector<BlockInfo>> regions;
};

bool IsLive(const BlockInfo& b) {
  return b.state == BlockState::kInUse || b.state == BlockState::kPendingFree;
}

// One region: its row, and its share of the (pool, stream) totals. Expandable
// ranges count one segment per mapped run, as snapshot() reports them.
SegmentRow AddRegion(const Segment& seg, const std::vector<BlockInfo>& blocks, PoolTotals& t,
                     std::vector<LiveBlock>& live) {
  SegmentRow row{seg.base, Bytes(), seg.stream.value(), seg.small, seg.expandable, 0, Bytes(),
                 Bytes(),  Bytes()};
  const bool split = blocks.size() > 1;
  bool in_run = false;
  for (const BlockInfo& b : blocks) {
    if (b.state == BlockState::kUnmapped) {
      in_run = false;
      continue;
    }
    if (!in_run) ++t.segments;
    in_run = true;
    ++row.blocks;
    row.reserved += b.size;
    if (IsLive(b)) {
      t.active += b.size;
      t.requested += b.requested;
      if (b.state == BlockState::kInUse) {
        t.allocated += b.size;
        row.allocated += b.size;
      }
      live.push_back(
          {b.offset, b.size, b.requested, b.stream, b.state == BlockState::kPendingFree, seg.base});
      continue;
    }
    row.free += b.size;
    row.largest_free = std::max(row.largest_free, b.size);
    t.free += b.size;
    t.largest_free = std::max(t.largest_free, b.size);
    ++t.free_blocks;
    if (split && !seg.expandable) t.inactive_split += b.size;
  }
  t.reserved += row.reserved;
  return row;
}

// What empty_cache() would return from this region (release_cached_blocks).
Bytes Releasable(const Segment& seg, const std::vector<BlockInfo>& blocks, Bytes page) {
  if (!seg.expandable) {
    return blocks.size() == 1 && blocks[0].state == BlockState::kFree ? blocks[0].size : Bytes();
  }
  Bytes out;
  for (const BlockInfo& b : blocks) {
    if (b.state != BlockState::kFree) continue;
    const Bytes begin = (b.offset - seg.base).RoundUp(page.value());
    const Bytes end = (b.offset + b.size - seg.base).RoundDown(page.value());
    if (begin < end) out += end - begin;
  }
  return out;
}

void AddInto(PoolTotals& sum, const PoolTotals& t) {
  sum.segments += t.segments;
  sum.reserved += t.reserved;
  sum.allocated += t.allocated;
  sum.active += t.active;
  sum.requested += t.requested;
  sum.inactive_split += t.inactive_split;
  sum.free += t.free;
  sum.free_blocks += t.free_blocks;
  sum.largest_free = std::max(sum.largest_free, t.largest_free);
}

}  // namespace

StateAnalysis Analyze(const torch::TorchAllocator& a, size_t biggest) {
  Blocks walk;
  a.WalkMemoryMap(walk);
  const std::vector<Segment>& segments = walk.segments;
  StateAnalysis out;
  std::map<std::pair<bool, uint64_t>, PoolTotals> pools;  // (large?, stream): the small pool first
  std::vector<LiveBlock> live;
  for (size_t i = 0; i < segments.size() && i < walk.regions.size(); ++i) {
    const Segment& seg = segments[i];
    PoolTotals& t = pools[{!seg.small, seg.stream.value()}];
    t.small = seg.small;
    t.stream = seg.stream.value();
    out.segments.push_back(AddRegion(seg, walk.regions[i], t, live));
    const Bytes page = seg.small ? Bytes(torch::kSmallBuffer) : a.options().large_segment_size;
    out.releasable += Releasable(seg, walk.regions[i], page);
  }
  for (const auto& [key, t] : pools) {
    out.pools.push_back(t);
    AddInto(out.total, t);
  }
  if (!out.total.free.is_zero()) {
    out.fragmentation = 1.0 - static_cast<double>(out.total.largest_free.value()) /
                                  static_cast<double>(out.total.free.value());
  }
  std::stable_sort(live.begin(), live.end(), [](const LiveBlock& x, const LiveBlock& y) {
    return x.size != y.size ? x.size > y.size : x.addr < y.addr;
  });
  if (live.size() > biggest) live.resize(biggest);
  out.biggest = std::move(live);
  return out;
}

}  // namespace hbmsim::sim::torch
