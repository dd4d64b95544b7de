// XLA's own assignment (each value's offset in its allocation, each
// allocation's size) beside what the `offline` planner makes of the same
// values, allocation by allocation (docs/formats/xla.md, "offline against
// XLA's assignment").
//
// An allocation with one value (a parameter, a constant, a live-out, a tuple
// index table) is nothing to pack: it is counted by kind. An allocation with
// several values is replayed as XLA's BufferAssigner builds it:
//
//   preallocated-temp   CombineTempAllocations lays XLA's temp allocations
//                       end to end, each start rounded up to the alignment:
//                       first the tuple-shaped values (AssignSingleHloBuffer
//                       gives each its own allocation), then the heap that
//                       the heap simulator packed from every other value.
//                       The tables' order is XLA's allocation order after
//                       CombineTempAllocations' std::partition (CombineOrder).
//   any other           (a live-out allocation that operands reused) its
//                       values packed as one heap by the same rules.
//
// The heap: values at one XLA offset whose inclusive live ranges overlap
// share memory (one HloBuffer: XLA never overlaps two live buffers), so they
// are one group, sized by its largest value. Times are the heap simulator's:
// the values sorted by (start, end, id); at each schedule time first the
// Alloc (or ShareWith, for a group already placed) of each value starting
// then, then the Free of each value ending then, each call one time step.
// The planner runs with PlannerRules::kXla on those intervals.
#ifndef HBMSIM_TRACE_XLA_ASSIGNMENT_COMPARE_H_
#define HBMSIM_TRACE_XLA_ASSIGNMENT_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/baselines/offline_planner.h"
#include "trace/layer.h"
#include "trace/xla/buffer_assignment_text.h"
#include "trace/xla/live_range_text.h"

namespace hbmsim::trace::xla {

struct CompareRules {
  PlannerRules rules = PlannerRules::kXla;
  uint64_t alignment = 128;
  bool tuples_apart = true;  // tuple-shaped temps in their own allocations first (XLA); false: in the heap
};

struct ValueOffsets {
  uint64_t id = 0;
  std::string name;
  uint64_t size = 0;
  uint64_t xla_offset = 0;
  std::optional<uint64_t> offline_offset;  // none: no live range, not packed
};

struct AllocationComparison {
  uint64_t index = 0;
  std::string kind;  // the allocation's flags as printed ("preallocated-temp", "maybe-live-out", ...)
  uint64_t xla_size = 0;
  uint64_t offline_size = 0;
  size_t values = 0;
  size_t matched = 0;  // values at XLA's offset
  uint64_t bytes = 0;
  uint64_t matched_bytes = 0;
  size_t tuple_tables = 0;  // temp: tuple-shaped values placed before the heap
  uint64_t heap_base = 0;
  std::optional<PackingOrder> order;   // the order that won the heap, when there was one
  size_t unranged = 0;                 // values with no live range (not packed)
  std::vector<ValueOffsets> differing;  // by XLA offset, then id
};

struct AssignmentComparison {
  PlannerRules rules = PlannerRules::kXla;
  uint64_t alignment = 0;
  std::vector<AllocationComparison> allocations;  // those with several values, file order
  std::vector<std::pair<std::string, size_t>> single_value_kinds;  // ("parameter", 6), ...
};

AssignmentComparison CompareAssignment(const BufferAssignmentText& assignment, const LiveRanges& ranges,
                                       const CompareRules& rules);

// XLA's chunk alignment as the dump shows it: the largest power of two that
// divides every nonzero offset of an allocation with several values (XLA
// rounds every chunk start up to it); `fallback` when every offset is 0.
uint64_t InferAlignment(const BufferAssignmentText& assignment, uint64_t fallback);

// The report lines: a title, one line per allocation, up to `listed`
// differing values under it, and the single-value allocations by kind.
std::vector<std::string> ExplainAssignment(const AssignmentComparison& c, size_t listed = 3);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_ASSIGNMENT_COMPARE_H_
