#include "sim/report/freed_ranges.h"

#include <algorithm>
#include <iterator>

namespace hbmsim::sim {

void FreedRanges::Freed(Offset offset, Bytes size, const FreeRecord& who) {
  if (size.is_zero()) return;
  Forget(offset, size);
  ranges_.emplace(offset.value(), Range{(offset + size).value(), who});
}

void FreedRanges::Forget(Offset offset, Bytes size) {
  if (size.is_zero() || ranges_.empty()) return;
  const uint64_t begin = offset.value();
  const uint64_t end = (offset + size).value();
  auto it = ranges_.lower_bound(begin);
  // A record starting below `begin` may reach into it: keep its part below,
  // and its part above `end` when it spans the whole forgotten range (then,
  // the records being disjoint, no other starts inside it). An insert moves
  // a B-tree's entries, so nothing is used after one.
  if (it != ranges_.begin()) {
    auto before = std::prev(it);
    if (before->second.end > begin) {
      const Range whole = before->second;
      before->second.end = begin;
      if (whole.end > end) {
        ranges_.emplace(end, Range{whole.end, whole.who});
        return;
      }
    }
  }
  while (it != ranges_.end() && it->first < end) {
    if (it->second.end > end) {
      const Range rest{it->second.end, it->second.who};
      it = ranges_.erase(it);
      ranges_.emplace_hint(it, end, rest);
      break;
    }
    it = ranges_.erase(it);
  }
}

std::vector<FreedRanges::Run> FreedRanges::RunsIn(Offset offset, Bytes size) const {
  std::vector<Run> out;
  ForEachRunIn(offset, size, [&](const Run& run) { out.push_back(run); });
  return out;
}

}  // namespace hbmsim::sim
