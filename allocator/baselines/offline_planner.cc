#include "allocator/baselines/offline_planner.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

#include "allocator/core/units.h"

namespace hbmsim::allocator {
namespace {

// A static centered interval tree: each node keeps the intervals containing
// its center, sorted by start (ascending) and by end (descending), so a range
// query reads only the prefix of the list that can overlap.
class IntervalTree {
 public:
  explicit IntervalTree(const std::vector<BufferInterval>& all) : all_(all) {
    std::vector<uint32_t> ids(all.size());
    std::iota(ids.begin(), ids.end(), 0);
    root_ = Build(std::move(ids));
  }

  // Calls f(index) for every interval overlapping [start, end).
  template <typename F>
  void Query(uint64_t start, uint64_t end, F&& f) const {
    if (root_) QuerySub(root_.get(), start, end, f);
  }

 private:
  struct Node {
    uint64_t center = 0;
    std::vector<uint32_t> by_start, by_end;
    std::unique_ptr<Node> left, right;
  };

  template <typename F>
  void QueryBoth(const Node* n, uint64_t start, uint64_t end, F&& f) const {
    // Both subtrees may overlap; recurse on each side (depth is O(log n)).
    if (n->left) QuerySub(n->left.get(), start, end, f);
    if (n->right) QuerySub(n->right.get(), start, end, f);
  }
  template <typename F>
  void QuerySub(const Node* n, uint64_t start, uint64_t end, F&& f) const {
    if (end <= n->center) {
      for (uint32_t i : n->by_start) {
        if (all_[i].start >= end) break;
        f(i);
      }
      if (n->left) QuerySub(n->left.get(), start, end, f);
    } else if (start > n->center) {
      for (uint32_t i : n->by_end) {
        if (all_[i].end <= start) break;
        f(i);
      }
      if (n->right) QuerySub(n->right.get(), start, end, f);
    } else {
      for (uint32_t i : n->by_start) f(i);
      QueryBoth(n, start, end, f);
    }
  }

  std::unique_ptr<Node> Build(std::vector<uint32_t> ids) {
    if (ids.empty()) return nullptr;
    auto node = std::make_unique<Node>();
    std::vector<uint64_t> starts;
    starts.reserve(ids.size());
    for (uint32_t i : ids) starts.push_back(all_[i].start);
    std::nth_element(starts.begin(), starts.begin() + starts.size() / 2, starts.end());
    node->center = starts[starts.size() / 2];  // a start point, so at least one interval contains it
    std::vector<uint32_t> left, right;
    for (uint32_t i : ids) {
      const BufferInterval& b = all_[i];
      if (b.end <= node->center) {
        left.push_back(i);
      } else if (b.start > node->center) {
        right.push_back(i);
      } else {
        node->by_start.push_back(i);
      }
    }
    node->by_end = node->by_start;
    std::sort(node->by_start.begin(), node->by_start.end(),
              [&](uint32_t a, uint32_t b) { return all_[a].start < all_[b].start; });
    std::sort(node->by_end.begin(), node->by_end.end(),
              [&](uint32_t a, uint32_t b) { return all_[a].end > all_[b].end; });
    node->left = Build(std::move(left));
    node->right = Build(std::move(right));
    return node;
  }

  const std::vector<BufferInterval>& all_;
  std::unique_ptr<Node> root_;
};

uint64_t Lifetime(const BufferInterval& b) { return b.end - b.start; }

std::vector<uint32_t> SortedOrder(const std::vector<BufferInterval>& all, PackingOrder order) {
  std::vector<uint32_t> ids(all.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](uint32_t x, uint32_t y) {
    const BufferInterval& a = all[x];
    const BufferInterval& b = all[y];
    const auto primary_a = order == PackingOrder::kSpatial ? a.size : Lifetime(a);
    const auto primary_b = order == PackingOrder::kSpatial ? b.size : Lifetime(b);
    if (primary_a != primary_b) return primary_a > primary_b;
    const auto second_a = order == PackingOrder::kSpatial ? Lifetime(a) : a.size;
    const auto second_b = order == PackingOrder::kSpatial ? Lifetime(b) : b.size;
    if (second_a != second_b) return second_a > second_b;
    if (a.start != b.start) return a.start < b.start;
    return a.key < b.key;
  });
  return ids;
}

// XLA's comparators (GetSpatialBufferIntervalCompare and
// GetTemporalBufferIntervalCompare): no start tie-break, the key (value id) decides.
std::vector<uint32_t> XlaSortedOrder(const std::vector<BufferInterval>& all, PackingOrder order) {
  std::vector<uint32_t> ids(all.size());
  std::iota(ids.begin(), ids.end(), 0);
  auto first_duration = [](const BufferInterval& b) { return (b.first_end == 0 ? b.end : b.first_end) - b.start; };
  std::sort(ids.begin(), ids.end(), [&](uint32_t x, uint32_t y) {
    const BufferInterval& a = all[x];
    const BufferInterval& b = all[y];
    if (order == PackingOrder::kSpatial) {
      if (a.size != b.size) return a.size > b.size;
      if (first_duration(a) != first_duration(b)) return first_duration(a) > first_duration(b);
    } else {
      if (Lifetime(a) != Lifetime(b)) return Lifetime(a) > Lifetime(b);
      if (a.size != b.size) return a.size > b.size;
    }
    return a.key < b.key;
  });
  return ids;
}

// offset + size, saturating: near 2^64 a wrapped end would put a buffer back at 0.
uint64_t SaturatingEnd(uint64_t offset, uint64_t size) { return (Bytes(offset) + Bytes(size)).value(); }

// Best fit among the gaps left by `busy` (offset, size) chunks; else their top.
// A gap starts where the chunks below it end, rounded up to `align` (1 when
// the sizes are rounded already).
uint64_t ChooseOffset(std::vector<std::pair<uint64_t, uint64_t>>& busy, uint64_t size, uint64_t align) {
  std::sort(busy.begin(), busy.end());
  uint64_t cursor = 0;
  std::optional<std::pair<uint64_t, uint64_t>> best;  // (gap size, offset)
  for (const auto& [offset, length] : busy) {
    if (offset > cursor) {
      const uint64_t gap = offset - cursor;
      if (gap >= size && (!best || gap < best->first)) best = {{gap, cursor}};
    }
    cursor = std::max(cursor, Bytes(SaturatingEnd(offset, length)).RoundUp(align).value());
  }
  return best ? best->second : cursor;
}

}  // namespace

std::string_view PackingOrderName(PackingOrder o) {
  return o == PackingOrder::kSpatial ? "spatial" : "temporal";
}

const PlacedBuffer* OfflinePlan::Find(uint64_t key) const {
  auto it = std::lower_bound(buffers.begin(), buffers.end(), key,
                             [](const PlacedBuffer& p, uint64_t k) { return p.key < k; });
  return it != buffers.end() && it->key == key ? &*it : nullptr;
}

OfflinePlan PlanWithOrder(const std::vector<BufferInterval>& intervals, uint64_t alignment,
                          PackingOrder order, PlannerRules rules) {
  std::vector<BufferInterval> all = intervals;
  const bool xla = rules == PlannerRules::kXla;
  // Saturating: a size past 2^64 becomes Bytes::Max(), which no limit holds.
  if (!xla) {
    for (BufferInterval& b : all) b.size = Bytes(b.size).RoundUp(alignment).value();
  }
  const IntervalTree tree(all);
  std::vector<uint64_t> offsets(all.size(), 0);
  std::vector<bool> placed(all.size(), false);
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  OfflinePlan plan;
  plan.order = order;
  for (uint32_t i : xla ? XlaSortedOrder(all, order) : SortedOrder(all, order)) {
    busy.clear();
    tree.Query(all[i].start, all[i].end, [&](uint32_t j) {
      if (placed[j]) busy.emplace_back(offsets[j], all[j].size);
    });
    offsets[i] = ChooseOffset(busy, all[i].size, xla ? alignment : 1);
    placed[i] = true;
    plan.heap_size = std::max(plan.heap_size, SaturatingEnd(offsets[i], all[i].size));
  }
  plan.buffers.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) plan.buffers.push_back({all[i].key, offsets[i], all[i].size});
  std::sort(plan.buffers.begin(), plan.buffers.end(),
            [](const PlacedBuffer& a, const PlacedBuffer& b) { return a.key < b.key; });
  return plan;
}

OfflinePlan PlanOffline(const std::vector<BufferInterval>& intervals, uint64_t alignment,
                        PlannerRules rules) {
  OfflinePlan spatial = PlanWithOrder(intervals, alignment, PackingOrder::kSpatial, rules);
  OfflinePlan temporal = PlanWithOrder(intervals, alignment, PackingOrder::kTemporal, rules);
  const uint64_t s = spatial.heap_size;
  const uint64_t t = temporal.heap_size;
  OfflinePlan best = t < s ? std::move(temporal) : std::move(spatial);
  best.spatial_heap_size = s;
  best.temporal_heap_size = t;
  return best;
}

}  // namespace hbmsim::allocator
