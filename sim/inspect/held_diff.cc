#include "sim/inspect/held_diff.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::inspect {
namespace {

using Json = nlohmann::ordered_json;

int64_t Signed(Bytes b) { return static_cast<int64_t>(std::min<uint64_t>(b.value(), INT64_MAX)); }

std::vector<HeldDelta> Deltas(const std::vector<HeldGroup>& a, const std::vector<HeldGroup>& b) {
  std::map<std::string, HeldDelta> by_key;  // ordered: ties stay in key order
  for (const HeldGroup& g : a) {
    HeldDelta& d = by_key[g.key];
    d.key = g.key;
    d.baseline_bytes = Signed(g.bytes);
    d.baseline_count = static_cast<int64_t>(g.count);
  }
  for (const HeldGroup& g : b) {
    HeldDelta& d = by_key[g.key];
    d.key = g.key;
    d.candidate_bytes = Signed(g.bytes);
    d.candidate_count = static_cast<int64_t>(g.count);
  }
  std::vector<HeldDelta> out;
  for (auto& [key, d] : by_key) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(), [](const HeldDelta& x, const HeldDelta& y) {
    const int64_t dx = std::llabs(x.bytes()), dy = std::llabs(y.bytes());
    if (dx != dy) return dx > dy;
    return std::llabs(x.candidate_count - x.baseline_count) >
           std::llabs(y.candidate_count - y.baseline_count);
  });
  return out;
}

int64_t Total(const std::vector<HeldGroup>& kinds) {
  int64_t total = 0;
  for (const HeldGroup& g : kinds) total += Signed(g.bytes);
  return total;
}

std::string DeltaText(int64_t b) {
  return fmt::format("{}{} B ({}{})", b > 0 ? "+" : "", b, b > 0 ? "+" : "", HumanReadableNumBytes(b));
}

void WriteTable(std::back_insert_iterator<std::string> out, std::string_view title,
                const std::vector<HeldDelta>& rows) {
  const size_t n = std::min(rows.size(), kDiffRows);
  fmt::format_to(out, "  {}{}\n", title,
                 n < rows.size() ? fmt::format(" ({} of {} listed)", n, rows.size()) : "");
  fmt::format_to(out, "    {:>16} {:>14} {:>14} {:>8}  {}\n", "change", "baseline", "candidate", "count",
                 "key");
  for (size_t i = 0; i < n; ++i) {
    const HeldDelta& d = rows[i];
    const int64_t count = d.candidate_count - d.baseline_count;
    fmt::format_to(out, "    {:>16} {:>14} {:>14} {:>8}  {}\n", fmt::format("{:+}", d.bytes()),
                   d.baseline_bytes, d.candidate_bytes, fmt::format("{:+}", count), d.key);
  }
}

}  // namespace

HeldDiff DiffHeld(const HeldReport& baseline, const HeldReport& candidate) {
  HeldDiff diff{baseline.file, candidate.file, {}};
  std::map<std::string, std::pair<const HeldDeviceReport*, const HeldDeviceReport*>> devices;
  for (const HeldDeviceReport& d : baseline.devices) devices[d.name].first = &d;
  for (const HeldDeviceReport& d : candidate.devices) devices[d.name].second = &d;
  static const std::vector<HeldGroup> kNone;
  for (const auto& [name, pair] : devices) {
    const auto& [a, b] = pair;
    HeldScopeDiff s;
    s.name = name;
    s.baseline_bytes = a ? Total(a->kinds) : 0;
    s.candidate_bytes = b ? Total(b->kinds) : 0;
    s.kinds = Deltas(a ? a->kinds : kNone, b ? b->kinds : kNone);
    s.frames = Deltas(a ? a->frames : kNone, b ? b->frames : kNone);
    diff.scopes.push_back(std::move(s));
  }
  if (!baseline.unplaced_kinds.empty() || !candidate.unplaced_kinds.empty()) {
    HeldScopeDiff s;
    s.name = "on no device";
    s.baseline_bytes = Total(baseline.unplaced_kinds);
    s.candidate_bytes = Total(candidate.unplaced_kinds);
    s.kinds = Deltas(baseline.unplaced_kinds, candidate.unplaced_kinds);
    s.frames = Deltas(baseline.unplaced_frames, candidate.unplaced_frames);
    diff.scopes.push_back(std::move(s));
  }
  return diff;
}

std::string RenderHeldDiffText(const HeldDiff& d) {
  std::string text;
  auto out = std::back_inserter(text);
  fmt::format_to(out, "What grew from {} (baseline) to {} (candidate), largest change first:\n", d.baseline,
                 d.candidate);
  for (const HeldScopeDiff& s : d.scopes) {
    fmt::format_to(out, "\n{}: {} B -> {} B, {}\n", s.name, s.baseline_bytes, s.candidate_bytes,
                   DeltaText(s.candidate_bytes - s.baseline_bytes));
    WriteTable(out, "by kind", s.kinds);
    WriteTable(out, "by frame (the innermost frame of the user's own code)", s.frames);
  }
  return text;
}

Json RenderHeldDiffJson(const HeldDiff& d) {
  auto rows = [](const std::vector<HeldDelta>& deltas) {
    Json out = Json::array();
    for (const HeldDelta& x : deltas) {
      out.push_back({{"key", x.key},
                     {"baseline_bytes", x.baseline_bytes},
                     {"candidate_bytes", x.candidate_bytes},
                     {"delta_bytes", x.bytes()},
                     {"baseline_count", x.baseline_count},
                     {"candidate_count", x.candidate_count}});
    }
    return out;
  };
  Json scopes = Json::array();
  for (const HeldScopeDiff& s : d.scopes) {
    scopes.push_back({{"scope", s.name},
                      {"baseline_bytes", s.baseline_bytes},
                      {"candidate_bytes", s.candidate_bytes},
                      {"delta_bytes", s.candidate_bytes - s.baseline_bytes},
                      {"by_kind", rows(s.kinds)},
                      {"by_frame", rows(s.frames)}});
  }
  return Json{{"baseline", d.baseline}, {"candidate", d.candidate}, {"held", std::move(scopes)}};
}

}  // namespace hbmsim::sim::inspect
