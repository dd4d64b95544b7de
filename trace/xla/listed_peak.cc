#include "trace/xla/listed_peak.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "fmt/format.h"

namespace hbmsim::trace::xla {
namespace {

std::string WithoutIndex(const std::string& name) { return name.substr(0, name.find('{')); }

uint64_t Sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

// hbmsim's live bytes at every time from 0 to the last end (inclusive ends).
std::vector<uint64_t> LiveByTime(const std::vector<LiveInterval>& intervals) {
  uint64_t last = 0;
  for (const LiveInterval& i : intervals) last = std::max(last, i.end);
  std::vector<int64_t> delta(last + 2, 0);
  for (const LiveInterval& i : intervals) {
    delta[i.start] += static_cast<int64_t>(i.size.value());
    delta[i.end + 1] -= static_cast<int64_t>(i.size.value());
  }
  std::vector<uint64_t> out(last + 1, 0);
  int64_t live = 0;
  for (uint64_t t = 0; t <= last; ++t) out[t] = static_cast<uint64_t>(live += delta[t]);
  return out;
}

// Why one name differs, in the rule's words.
std::string Reason(const NameDifference& d) {
  if (d.hbmsim.empty()) return "not in hbmsim's sum: the buffer assignment gave it no memory";
  if (d.listed.empty()) return "not listed by XLA at T: an alias hbmsim merged into a longer live range";
  const bool one_size =
      std::all_of(d.listed.begin(), d.listed.end(), [&](uint64_t b) { return b == d.listed[0]; });
  if (one_size && d.listed.size() == d.hbmsim.size() && d.listed[0] % 8 == 0 && d.listed[0] <= 8 * 64) {
    return fmt::format(
        "a tuple-shaped instruction: XLA's listing sizes each of its values by the instruction's shape (its "
        "{} B index table), not the value's own bytes",
        d.listed[0]);
  }
  return "sized differently";
}

std::string SumText(const std::vector<uint64_t>& v) {
  return v.empty() ? std::string("none") : fmt::format("{} B", fmt::join(v, " + "));
}

}  // namespace

PeakComparison ComparePeak(const ListedPeak& listed, const std::vector<LiveInterval>& intervals) {
  PeakComparison c;
  c.listed_time = listed.time;
  c.listed_values = listed.values.size();
  std::map<std::string, NameDifference> by_name;
  for (const auto& [name, bytes] : listed.values) {
    c.listed_bytes += bytes;
    by_name[WithoutIndex(name)].listed.push_back(bytes);
  }
  for (const LiveInterval& i : intervals) {
    if (i.start > listed.time || listed.time > i.end) continue;
    c.at_listed_time += i.size.value();
    by_name[WithoutIndex(i.name)].hbmsim.push_back(i.size.value());
  }
  const std::vector<uint64_t> live = LiveByTime(intervals);
  for (uint64_t t = 0; t < live.size(); ++t) {
    if (live[t] > c.peak) c.peak = live[t], c.peak_time = t;
  }
  for (auto& [name, d] : by_name) {
    if (Sum(d.listed) == Sum(d.hbmsim)) continue;
    d.name = name;
    c.differences.push_back(std::move(d));
  }
  return c;
}

std::vector<std::string> ExplainPeak(const PeakComparison& c) {
  std::vector<std::string> out;
  const int64_t total = static_cast<int64_t>(c.peak) - static_cast<int64_t>(c.listed_bytes);
  out.push_back(
      fmt::format("XLA's own peak listing: {} B in {} values live at time {} (\"Live ranges at {} (peak)\"); "
                  "hbmsim's peak "
                  "live: {} B at time {}; difference {:+} B",
                  c.listed_bytes, c.listed_values, c.listed_time, c.listed_time, c.peak, c.peak_time, total));
  const int64_t moment = static_cast<int64_t>(c.peak) - static_cast<int64_t>(c.at_listed_time);
  const int64_t values = static_cast<int64_t>(c.at_listed_time) - static_cast<int64_t>(c.listed_bytes);
  out.push_back(fmt::format(
      "  moment {:+} B: at time {} hbmsim holds {} B; its peak is the most live bytes at any time (ends "
      "inclusive), while XLA's sweep picks T sizing each value by its instruction's whole shape and ending a "
      "value at end+1 after that time's starts",
      moment, c.listed_time, c.at_listed_time));
  out.push_back(fmt::format("  values {:+} B at time {}:{}", values, c.listed_time,
                            c.differences.empty() ? " none (the same values, the same sizes)" : ""));
  for (const NameDifference& d : c.differences) {
    out.push_back(fmt::format("    {}: XLA lists {}, hbmsim {}: {}", d.name, SumText(d.listed), SumText(d.hbmsim),
                              Reason(d)));
  }
  return out;
}

}  // namespace hbmsim::trace::xla
