#include "trace/xla/text_pair.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "trace/xla/assignment_compare.h"
#include "trace/xla/listed_peak.h"

namespace hbmsim::trace::xla {
namespace {

constexpr std::string_view kAssignmentSuffix = "-buffer-assignment.txt";
constexpr std::string_view kLiveRangeSuffix = "-live-range.txt";

// An assigned value with its live range, before aliases are merged.
struct Matched {
  uint64_t allocation = 0;  // position in the file's allocation list
  uint64_t offset = 0;
  LiveInterval interval;
};

std::string_view WithoutShapeIndex(std::string_view name) { return name.substr(0, name.find('{')); }

class Joiner {
 public:
  explicit Joiner(const LiveRanges& ranges) : ranges_(ranges), used_(ranges.entries.size(), false) {
    for (size_t i = 0; i < ranges.entries.size(); ++i) by_name_.emplace(ranges.entries[i].name, i);
  }

  // The live range of `name` by the rules of the header, or nullptr.
  const LiveRangeEntry* Find(const std::string& name) {
    if (const LiveRangeEntry* e = Lookup(name)) return e;
    if (name.find('{') == std::string::npos) {
      if (const LiveRangeEntry* e = Lookup(name + "{}")) return e;
    } else if (const LiveRangeEntry* e = Lookup(std::string(WithoutShapeIndex(name)))) {
      ++by_base_name_;
      return e;
    }
    return nullptr;
  }

  int by_base_name() const { return by_base_name_; }
  // The live ranges no assigned value matched, in file order.
  std::vector<const LiveRangeEntry*> Unused() const {
    std::vector<const LiveRangeEntry*> out;
    for (size_t i = 0; i < used_.size(); ++i) {
      if (!used_[i]) out.push_back(&ranges_.entries[i]);
    }
    return out;
  }

 private:
  const LiveRangeEntry* Lookup(const std::string& name) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return nullptr;
    used_[it->second] = true;
    return &ranges_.entries[it->second];
  }

  const LiveRanges& ranges_;
  absl::flat_hash_map<std::string, size_t> by_name_;  // lookups only
  std::vector<bool> used_;
  int by_base_name_ = 0;
};

// Overlapping values at one (allocation, offset) become one interval.
std::vector<LiveInterval> MergeAliases(std::vector<Matched> matched, int& merged) {
  std::sort(matched.begin(), matched.end(), [](const Matched& a, const Matched& b) {
    return std::tie(a.allocation, a.offset, a.interval.start, a.interval.id) <
           std::tie(b.allocation, b.offset, b.interval.start, b.interval.id);
  });
  std::vector<LiveInterval> out;
  const Matched* group = nullptr;
  for (const Matched& m : matched) {
    if (group != nullptr && group->allocation == m.allocation && group->offset == m.offset &&
        m.interval.start <= out.back().end) {
      LiveInterval& u = out.back();
      u.end = std::max(u.end, m.interval.end);
      u.size = std::max(u.size, m.interval.size);
      u.id = std::min(u.id, m.interval.id);
      ++merged;
      continue;
    }
    group = &m;
    out.push_back(m.interval);
  }
  return out;
}

std::string SkippedValuesWarning(std::string_view ba_source, std::string_view lr_source,
                                 const std::vector<const AssignedValue*>& skipped, size_t total) {
  return fmt::format(
      "{}: {} of {} assigned values have no live range in {} and are not replayed (first: {} at "
      "line {}); "
      "the live ranges cover only the flattened schedule, not the values of computations it does not list",
      ba_source, skipped.size(), total, lr_source, skipped.front()->name, skipped.front()->line);
}

std::string UnusedRangesWarning(std::string_view lr_source, const std::vector<const LiveRangeEntry*>& unused,
                                size_t total) {
  return fmt::format(
      "{}: {} of {} live ranges name no assigned value and are not replayed (first: {} at line {}); "
      "the buffer assignment gave them no memory",
      lr_source, unused.size(), total, unused.front()->name, unused.front()->line);
}

void AddMetadata(XlaTrace& trace, std::string_view lr_source, size_t values, size_t replayed, int merged,
                 int by_base_name, uint64_t max_time) {
  auto& m = trace.metadata.entries;
  m.emplace_back("source", "xla buffer-assignment + live-range");
  // A compiled program has no device limit: replay sizes it rather than refuse.
  m.emplace_back("compiled_program", "true");
  m.emplace_back("xla_live_ranges", std::string(lr_source));
  m.emplace_back("xla_max_time", std::to_string(max_time));
  m.emplace_back("xla_assigned_values", std::to_string(values));
  m.emplace_back("xla_replayed_intervals", std::to_string(replayed));
  m.emplace_back("xla_merged_values", std::to_string(merged));
  m.emplace_back("xla_matched_without_shape_index", std::to_string(by_base_name));
}

// XLA's own assignment beside offline's packing, per allocation
// (assignment_compare.h): report lines, and one metadata entry per allocation.
void AddAssignmentComparison(const BufferAssignmentText& assignment, const LiveRanges& ranges,
                             TraceMetadata& metadata) {
  CompareRules rules;
  rules.alignment = InferAlignment(assignment, rules.alignment);
  const AssignmentComparison c = CompareAssignment(assignment, ranges, rules);
  for (const AllocationComparison& a : c.allocations) {
    metadata.entries.emplace_back(
        fmt::format("xla_offline_allocation_{}", a.index),
        fmt::format("xla_size={} offline_size={} values={} matched={} alignment={}", a.xla_size, a.offline_size,
                    a.values, a.matched, c.alignment));
  }
  for (std::string& line : ExplainAssignment(c)) metadata.entries.emplace_back("note", std::move(line));
}

}  // namespace

XlaTrace JoinTextPair(const BufferAssignmentText& assignment, std::string_view ba_source,
                      const LiveRanges& ranges, std::string_view lr_source) {
  Joiner joiner(ranges);
  std::vector<Matched> matched;
  std::vector<const AssignedValue*> skipped;
  size_t total = 0;
  Bytes base;  // where this allocation starts when they are laid end to end
  for (size_t a = 0; a < assignment.allocations.size(); ++a) {
    const Allocation& allocation = assignment.allocations[a];
    for (const AssignedValue& v : allocation.values) {
      ++total;
      const LiveRangeEntry* range = joiner.Find(v.name);
      if (range == nullptr) {
        skipped.push_back(&v);
        continue;
      }
      matched.push_back(
          {a, v.offset, {v.id, v.name, v.size, range->start, range->end, (base + Bytes(v.offset)).value()}});
    }
    base += allocation.size;
  }
  XlaTrace trace;
  trace.source = std::string(ba_source);
  int merged = 0;
  const int by_base_name = joiner.by_base_name();
  std::vector<LiveInterval> intervals = MergeAliases(std::move(matched), merged);
  trace.events = IntervalsToEvents(intervals);
  if (!skipped.empty()) trace.warnings.push_back(SkippedValuesWarning(ba_source, lr_source, skipped, total));
  if (std::vector<const LiveRangeEntry*> unused = joiner.Unused(); !unused.empty()) {
    trace.warnings.push_back(UnusedRangesWarning(lr_source, unused, ranges.entries.size()));
  }
  AddMetadata(trace, lr_source, total, intervals.size(), merged, by_base_name, ranges.max_time);
  if (ranges.peak) {
    const PeakComparison peak = ComparePeak(*ranges.peak, intervals);
    trace.metadata.entries.emplace_back("xla_listed_peak_time", std::to_string(peak.listed_time));
    trace.metadata.entries.emplace_back("xla_listed_peak_bytes", std::to_string(peak.listed_bytes));
    for (std::string& line : ExplainPeak(peak)) trace.metadata.entries.emplace_back("note", std::move(line));
  }
  AddAssignmentComparison(assignment, ranges, trace.metadata);
  for (const std::string& w : trace.warnings) trace.metadata.entries.emplace_back("warning", w);
  return trace;
}

absl::StatusOr<XlaTrace> ParseTextPair(std::string_view assignment_text, std::string_view ba_source,
                                       std::optional<std::string_view> live_range_text,
                                       std::string_view lr_source) {
  absl::StatusOr<BufferAssignmentText> assignment = ParseBufferAssignmentText(assignment_text, ba_source);
  if (!assignment.ok()) return assignment.status();
  absl::StatusOr<LiveRanges> ranges;
  if (live_range_text) {
    ranges = ParseLiveRangeText(*live_range_text, lr_source);
  } else if (assignment->live_range_text) {
    lr_source = ba_source;
    ranges = ParseLiveRangeText(*assignment->live_range_text, ba_source, assignment->live_range_first_line);
  } else {
    return absl::InvalidArgumentError(
        fmt::format("{}: no live ranges: no appended \"HloLiveRange (max N):\" section", ba_source));
  }
  if (!ranges.ok()) return ranges.status();
  return JoinTextPair(*assignment, ba_source, *ranges, lr_source);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::NotFoundError(fmt::format("{}: cannot read", path));
  return std::move(text).str();
}

std::vector<std::string> TextPairPartners(const std::string& path) {
  const std::string_view name = path;
  if (name.ends_with(kAssignmentSuffix)) {
    return {path.substr(0, path.size() - kAssignmentSuffix.size()) + std::string(kLiveRangeSuffix)};
  }
  if (name.ends_with(kLiveRangeSuffix)) {
    return {path.substr(0, path.size() - kLiveRangeSuffix.size()) + std::string(kAssignmentSuffix)};
  }
  return {};
}

absl::StatusOr<XlaTrace> ReadTextPairFiles(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  const bool is_assignment = LooksLikeBufferAssignmentText(*text);
  std::string ba_path = path, lr_path = path;
  std::string_view from = is_assignment ? kAssignmentSuffix : kLiveRangeSuffix;
  std::string_view to = is_assignment ? kLiveRangeSuffix : kAssignmentSuffix;
  std::string sibling;
  if (std::string_view(path).ends_with(from))
    sibling = path.substr(0, path.size() - from.size()) + std::string(to);
  if (is_assignment) {
    absl::StatusOr<BufferAssignmentText> assignment = ParseBufferAssignmentText(*text, path);
    if (!assignment.ok()) return assignment.status();
    if (assignment->live_range_text) return ParseTextPair(*text, path);
    absl::StatusOr<std::string> ranges = sibling.empty() ? absl::NotFoundError("") : ReadWholeFile(sibling);
    if (!ranges.ok()) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: no live ranges: no appended \"HloLiveRange (max N):\" section and no readable {}", path,
          sibling.empty() ? std::string("X-live-range.txt beside an X-buffer-assignment.txt") : sibling));
    }
    return ParseTextPair(*text, path, *ranges, sibling);
  }
  absl::StatusOr<std::string> assignment = sibling.empty() ? absl::NotFoundError("") : ReadWholeFile(sibling);
  if (!assignment.ok()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: a live-range dump needs its buffer assignment, and there is no readable {}", path,
        sibling.empty() ? std::string("X-buffer-assignment.txt beside an X-live-range.txt") : sibling));
  }
  return ParseTextPair(*assignment, sibling, *text, path);
}

}  // namespace hbmsim::trace::xla
