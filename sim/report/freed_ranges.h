// Who freed the free memory a policy keeps: for each range of bytes a free
// left free, the free that did (its event, buffer id and label), so "Reserved,
// explained" can say which frees split a segment (issue 46: the inactive_split
// bytes "freed by model.py:88 forward: 40 MiB in 12 blocks").
//
//   device: [ live A ][ freed by f7 ][ freed by f9 ][ live B ][ never freed ]
//   ranges:            {100: f7}     {160: f9}
//
// A record lives exactly as long as its bytes stay free: an alloc or a
// program placed over them, their pages unmapped or their region released,
// ends it (Forget trims a record partly covered). So the records are disjoint,
// there are never more of them than runs of free bytes, and their number does
// not grow with the number of events. Bytes with no record were never freed in
// the trace: split off a segment and never used, or free in the start state.
//
// The records are an ordered map keyed by each record's end: every answer is
// in address order, none depends on a hash. Keyed by the end, not the begin,
// because the commonest change is an alloc taking the front of freed bytes (a
// policy splits a free block and hands out its start): the record keeps its
// end, so its begin moves up in place, with no node removed or added.
//
//   record [100, 300) keyed 300; alloc [100, 160)  ->  [160, 300) keyed 300
#ifndef HBMSIM_SIM_REPORT_FREED_RANGES_H_
#define HBMSIM_SIM_REPORT_FREED_RANGES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "allocator/core/units.h"
#include "sim/layer.h"

namespace hbmsim::sim {

// The free that left a range free. `label` indexes the caller's label texts.
struct FreeRecord {
  EventIndex event;
  uint64_t id = 0;
  uint32_t label = 0;
};

class FreedRanges {
 public:
  // [offset, offset + size) was freed by `who`. A stale record still covering
  // any of it (memory taken by a path no hook saw) is dropped first.
  void Freed(Offset offset, Bytes size, const FreeRecord& who);
  // [offset, offset + size) holds something again or left the device: the
  // records of its bytes end; a record partly inside keeps its other bytes.
  void Forget(Offset offset, Bytes size);
  // Every record ends (live buffers moved: the addresses no longer say who freed what).
  void Clear() { ranges_.clear(); }
  size_t size() const { return ranges_.size(); }

  // One recorded run inside a queried range, clipped to it.
  struct Run {
    uint64_t begin = 0;
    uint64_t end = 0;
    FreeRecord who;
  };
  // The recorded runs inside [offset, offset + size), in address order.
  std::vector<Run> RunsIn(Offset offset, Bytes size) const;
  // The same, each handed to `fn(const Run&)` without a vector (a walk asks
  // once per free block).
  template <typename Fn>
  void ForEachRunIn(Offset offset, Bytes size, Fn&& fn) const {
    if (size.is_zero() || ranges_.empty()) return;
    const uint64_t begin = offset.value();
    const uint64_t end = (offset + size).value();
    for (auto it = ranges_.upper_bound(begin); it != ranges_.end() && it->second.begin < end; ++it) {
      fn(Run{std::max(it->second.begin, begin), std::min(it->first, end), it->second.who});
    }
  }

 private:
  struct Range {
    uint64_t begin = 0;
    FreeRecord who;
  };
  // end -> the range; disjoint, so ordered by begin too. A B-tree: every
  // alloc and free of a replay with a report passes here, and std::map's node
  // per range cost 3x the report's replay on a churn (bench/README.md).
  absl::btree_map<uint64_t, Range> ranges_;
};

// What ExplainReserved needs to name the frees: the records and the label
// texts their `label` indexes.
struct FreeHistory {
  const FreedRanges& ranges;
  const std::vector<std::string>& labels;
};

// The label of free bytes no free in the trace left free.
inline constexpr std::string_view kNotFreedInTrace = "(not freed in the trace)";

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_FREED_RANGES_H_
