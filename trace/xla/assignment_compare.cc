#include "trace/xla/assignment_compare.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "allocator/core/units.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "trace/layer.h"

namespace hbmsim::trace::xla {
namespace {

// One value of an allocation with what the comparison needs.
struct Member {
  const AssignedValue* value = nullptr;
  const LiveRangeEntry* range = nullptr;  // null: no live range
  uint64_t event_start = 0, event_end = 0;  // heap-simulator times (inclusive)
  size_t group = 0;
  std::optional<uint64_t> offline;
};

// The live range of an assigned value, by the join rules of text_pair.h.
class RangeIndex {
 public:
  explicit RangeIndex(const LiveRanges& ranges) {
    for (const LiveRangeEntry& e : ranges.entries) by_name_.emplace(e.name, &e);
  }
  const LiveRangeEntry* Find(const std::string& name) const {
    if (const LiveRangeEntry* e = Lookup(name)) return e;
    if (name.find('{') == std::string::npos) return Lookup(name + "{}");
    return Lookup(name.substr(0, name.find('{')));
  }

 private:
  const LiveRangeEntry* Lookup(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  absl::flat_hash_map<std::string, const LiveRangeEntry*> by_name_;  // lookups only
};

std::string KindOf(const std::string& flags) {
  if (flags.find("preallocated-temp") != std::string::npos) return "preallocated-temp";
  if (flags.starts_with("parameter")) return "parameter";
  if (flags.find("constant") != std::string::npos) return "constant";
  if (flags.find("maybe-live-out") != std::string::npos) return "maybe-live-out";
  if (flags.find("thread-local") != std::string::npos) return "thread-local";
  return flags.empty() ? "no flags" : flags;
}

uint64_t RoundUp(uint64_t v, uint64_t align) { return Bytes(v).RoundUp(align).value(); }

// Heap-simulator times: values by (start, end, id); at each schedule time the
// allocs (and shares) of that time, then its frees, one step per call.
void AssignEventTimes(std::vector<Member*>& heap) {
  std::sort(heap.begin(), heap.end(), [](const Member* a, const Member* b) {
    return std::tie(a->range->start, a->range->end, a->value->id) <
           std::tie(b->range->start, b->range->end, b->value->id);
  });
  std::vector<std::tuple<uint64_t, int, size_t>> calls;  // (time, 0 alloc / 1 free, rank)
  for (size_t r = 0; r < heap.size(); ++r) {
    calls.emplace_back(heap[r]->range->start, 0, r);
    calls.emplace_back(heap[r]->range->end, 1, r);
  }
  std::sort(calls.begin(), calls.end());
  uint64_t step = 0;
  for (const auto& [time, kind, rank] : calls) (kind == 0 ? heap[rank]->event_start : heap[rank]->event_end) = step++;
}

// Values at one XLA offset whose inclusive ranges overlap form one group
// (chains included); returns the group count.
size_t GroupAliases(std::vector<Member*>& heap) {
  std::sort(heap.begin(), heap.end(), [](const Member* a, const Member* b) {
    return std::tie(a->value->offset, a->range->start, a->value->id) <
           std::tie(b->value->offset, b->range->start, b->value->id);
  });
  size_t groups = 0;
  uint64_t group_end = 0;
  for (size_t i = 0; i < heap.size(); ++i) {
    const bool joins = i > 0 && heap[i - 1]->value->offset == heap[i]->value->offset &&
                       heap[i]->range->start <= group_end;
    if (!joins) {
      heap[i]->group = groups++;
      group_end = heap[i]->range->end;
    } else {
      heap[i]->group = heap[i - 1]->group;
      group_end = std::max(group_end, heap[i]->range->end);
    }
  }
  return groups;
}

// Packs `heap` (values with a live range and bytes) from `base`; returns the heap's size.
uint64_t PackHeap(std::vector<Member*> heap, uint64_t base, const CompareRules& rules,
                  std::optional<PackingOrder>& order) {
  if (heap.empty()) return 0;
  const size_t groups = GroupAliases(heap);
  AssignEventTimes(heap);  // sorted by (start, end, id): the first of a group is its canonical value
  std::vector<BufferInterval> intervals(groups);
  std::vector<uint64_t> canonical_id(groups);
  std::vector<bool> seen(groups, false);
  for (const Member* m : heap) {
    BufferInterval& b = intervals[m->group];
    if (!seen[m->group]) {  // the group's first value in time: XLA's canonical (Alloc, not ShareWith)
      seen[m->group] = true;
      canonical_id[m->group] = m->value->id;
      b.start = m->event_start;
      b.first_end = m->event_end + 1;
    }
    b.size = std::max(b.size, m->value->size.value());
    b.end = std::max(b.end, m->event_end + 1);
  }
  // XLA breaks the last tie on the canonical value's id: keys follow the id order.
  std::vector<size_t> by_id(groups);
  std::iota(by_id.begin(), by_id.end(), 0);
  std::sort(by_id.begin(), by_id.end(), [&](size_t a, size_t b) { return canonical_id[a] < canonical_id[b]; });
  std::vector<uint64_t> key_of(groups);
  for (size_t k = 0; k < groups; ++k) key_of[by_id[k]] = k;
  for (size_t g = 0; g < groups; ++g) intervals[g].key = key_of[g];
  const OfflinePlan plan = PlanOffline(intervals, rules.alignment, rules.rules);
  order = plan.order;
  for (Member* m : heap) m->offline = base + plan.Find(key_of[m->group])->offset;
  return plan.heap_size;
}

// The order in which CombineTempAllocations lays the tuple tables (each its
// own temp allocation) end to end. BufferAssigner creates the allocations
// in its buffer order (size down, live-out first, then HLO post order, which
// the value ids follow), the heap's last; CombineTempAllocations then moves
// the temp ones behind the others with std::partition, which is not stable:
// from the front, each temp allocation is swapped with the last non-temp one.
std::vector<Member*> CombineOrder(const BufferAssignmentText& all, const Allocation& temp,
                                  const std::vector<Member*>& tuples) {
  struct Slot {
    uint64_t size = 0;
    bool live_out = false;
    uint64_t id = 0;
    Member* tuple = nullptr;  // null: a non-temp allocation
  };
  std::vector<Slot> slots;
  for (const Allocation& a : all.allocations) {
    if (&a == &temp || a.values.empty()) continue;
    uint64_t id = UINT64_MAX;
    for (const AssignedValue& v : a.values) id = std::min(id, v.id);
    slots.push_back({a.size.value(), a.flags.find("maybe-live-out") != std::string::npos, id, nullptr});
  }
  for (Member* m : tuples) slots.push_back({m->value->size.value(), false, m->value->id, m});
  std::stable_sort(slots.begin(), slots.end(), [](const Slot& x, const Slot& y) {
    if (x.size != y.size) return x.size > y.size;
    if (x.live_out != y.live_out) return x.live_out;
    return x.id < y.id;
  });
  // std::partition(not temp) as libstdc++ and libc++ do it; the heap, last, never moves.
  size_t first = 0, last = slots.size();
  while (true) {
    while (first != last && slots[first].tuple == nullptr) ++first;
    if (first == last) break;
    do {
      --last;
    } while (first != last && slots[last].tuple != nullptr);
    if (first == last) break;
    std::swap(slots[first], slots[last]);
    ++first;
  }
  std::vector<Member*> out;
  for (size_t i = first; i < slots.size(); ++i) out.push_back(slots[i].tuple);
  return out;
}

AllocationComparison CompareOne(const BufferAssignmentText& all, const Allocation& a, const RangeIndex& index,
                                const CompareRules& rules) {
  AllocationComparison out;
  out.index = a.index;
  out.kind = KindOf(a.flags);
  out.xla_size = a.size.value();
  out.values = a.values.size();
  std::vector<Member> members(a.values.size());
  std::vector<Member*> tuples, heap;
  const bool temp = out.kind == "preallocated-temp";
  for (size_t i = 0; i < a.values.size(); ++i) {
    Member& m = members[i];
    m.value = &a.values[i];
    m.range = index.Find(m.value->name);
    if (temp && rules.tuples_apart && m.value->tuple_shaped) {
      tuples.push_back(&m);
    } else if (m.range == nullptr) {
      ++out.unranged;
    } else if (m.value->size.is_zero()) {
      m.offline = 0;  // XLA: a 0-byte value gets the chunk {0, 0}, at its heap's base
    } else {
      heap.push_back(&m);
    }
  }
  if (temp) tuples = CombineOrder(all, a, tuples);
  uint64_t cursor = 0;
  for (Member* m : tuples) {
    m->offline = RoundUp(cursor, rules.alignment);
    cursor = *m->offline + m->value->size.value();
  }
  out.tuple_tables = tuples.size();
  out.heap_base = tuples.empty() ? 0 : RoundUp(cursor, rules.alignment);
  for (Member& m : members) {
    if (m.offline && !m.value->tuple_shaped) *m.offline += out.heap_base;  // 0-byte values
  }
  const uint64_t heap_size = PackHeap(heap, out.heap_base, rules, out.order);
  out.offline_size = heap.empty() ? cursor : out.heap_base + heap_size;
  for (const Member& m : members) {
    out.bytes += m.value->size.value();
    if (m.offline == m.value->offset) {
      ++out.matched;
      out.matched_bytes += m.value->size.value();
    } else {
      out.differing.push_back({m.value->id, m.value->name, m.value->size.value(), m.value->offset, m.offline});
    }
  }
  std::sort(out.differing.begin(), out.differing.end(), [](const ValueOffsets& x, const ValueOffsets& y) {
    return std::tie(x.xla_offset, x.id) < std::tie(y.xla_offset, y.id);
  });
  return out;
}

}  // namespace

uint64_t InferAlignment(const BufferAssignmentText& assignment, uint64_t fallback) {
  uint64_t g = 0;
  for (const Allocation& a : assignment.allocations) {
    if (a.values.size() < 2) continue;
    for (const AssignedValue& v : a.values) g = std::gcd(g, v.offset);
  }
  return g == 0 ? fallback : g & (~g + 1);  // the lowest set bit: a power of two
}

AssignmentComparison CompareAssignment(const BufferAssignmentText& assignment, const LiveRanges& ranges,
                                       const CompareRules& rules) {
  const RangeIndex index(ranges);
  AssignmentComparison out;
  out.rules = rules.rules;
  out.alignment = rules.alignment;
  std::map<std::string, size_t> kinds;  // ordered: the report lists them by name
  for (const Allocation& a : assignment.allocations) {
    if (a.values.size() >= 2) {
      out.allocations.push_back(CompareOne(assignment, a, index, rules));
    } else {
      ++kinds[KindOf(a.flags)];
    }
  }
  out.single_value_kinds.assign(kinds.begin(), kinds.end());
  return out;
}

std::vector<std::string> ExplainAssignment(const AssignmentComparison& c, size_t listed) {
  std::vector<std::string> lines;
  if (c.allocations.empty()) return lines;
  lines.push_back(fmt::format(
      "XLA's own assignment beside offline's packing of the same values ({} rules, alignment {} B), per "
      "allocation with several values:",
      c.rules == PlannerRules::kXla ? "XLA's" : "hbmsim's", c.alignment));
  for (const AllocationComparison& a : c.allocations) {
    std::string how;
    if (a.tuple_tables > 0) {
      how = fmt::format("; {} tuple index tables in their own allocations first, the heap from offset {}",
                        a.tuple_tables, a.heap_base);
    }
    if (a.order) how += fmt::format(" ({} order)", PackingOrderName(*a.order));
    if (a.unranged > 0) how += fmt::format("; {} values without a live range not packed", a.unranged);
    lines.push_back(fmt::format(
        "  allocation {} ({}): XLA {} B, offline {} B ({}{} B); {} of {} values at XLA's offset ({} of {} B){}",
        a.index, a.kind, a.xla_size, a.offline_size, a.offline_size >= a.xla_size ? '+' : '-',
        // unsigned both ways: sizes from a dump may be near 2^64
        a.offline_size >= a.xla_size ? a.offline_size - a.xla_size : a.xla_size - a.offline_size, a.matched,
        a.values, a.matched_bytes, a.bytes, how));
    for (size_t i = 0; i < a.differing.size() && i < listed; ++i) {
      const ValueOffsets& v = a.differing[i];
      lines.push_back(fmt::format("    {} (value {}, {} B): XLA at {}, offline at {}", v.name, v.id, v.size,
                                  v.xla_offset,
                                  v.offline_offset ? std::to_string(*v.offline_offset) : std::string("none")));
    }
    if (a.differing.size() > listed)
      lines.push_back(fmt::format("    ... and {} more", a.differing.size() - listed));
  }
  if (!c.single_value_kinds.empty()) {
    std::vector<std::string> parts;
    size_t n = 0;
    for (const auto& [kind, count] : c.single_value_kinds) {
      parts.push_back(fmt::format("{} {}", count, kind));
      n += count;
    }
    lines.push_back(fmt::format("  the other {} allocations hold one value each, at offset 0: {}", n,
                                fmt::join(parts, ", ")));
  }
  return lines;
}

}  // namespace hbmsim::trace::xla
