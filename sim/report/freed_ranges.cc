#include "sim/report/freed_ranges.h"

#include <algorithm>
#include <iterator>

namespace hbmsim::sim {

void FreedRanges::Freed(Offset offset, Bytes size, const FreeRecord& who) {
  if (size.is_zero()) return;
  const uint64_t begin = offset.value();
  const uint64_t end = (offset + size).value();
  // The bytes of a buffer being freed were live, so normally no record
  // reaches them: one descent finds where the record goes.
  auto after = ranges_.upper_bound(begin);
  if (after == ranges_.end() || after->second.begin >= end) {
    ranges_.emplace_hint(after, end, Range{begin, who});
    return;
  }
  Forget(offset, size);
  ranges_.emplace(end, Range{begin, who});
}

void FreedRanges::Forget(Offset offset, Bytes size) {
  if (size.is_zero() || ranges_.empty()) return;
  const uint64_t begin = offset.value();
  const uint64_t end = (offset + size).value();
  // The records ending after `begin`, in address order, while they start below `end`.
  auto it = ranges_.upper_bound(begin);
  while (it != ranges_.end() && it->second.begin < end) {
    Range& r = it->second;
    if (r.begin < begin) {
      // It starts below: its part below stays, keyed by `begin` (no record
      // lies between, the records being disjoint). An insert moves a
      // B-tree's entries, so nothing is used after one but what it returns.
      const Range below{r.begin, r.who};
      if (it->first > end) {  // it spans the whole forgotten range: its part above stays too
        r.begin = end;
        ranges_.emplace_hint(it, begin, below);
        return;
      }
      it = ranges_.erase(it);
      it = std::next(ranges_.emplace_hint(it, begin, below));
      continue;
    }
    if (it->first > end) {  // its part above `end` stays, under the same key
      r.begin = end;
      return;
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
