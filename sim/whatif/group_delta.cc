#include "sim/whatif/group_delta.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "fmt/format.h"
#include "sim/config/allocator_config.h"
#include "sim/config/policy_registry.h"
#include "sim/layer.h"
#include "sim/report/user_frames.h"
#include "sim/scenario/scenario_run.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

std::string Signed(int64_t bytes) {
  const std::string human = HumanReadableNumBytes(Bytes(static_cast<uint64_t>(std::llabs(bytes))));
  return fmt::format("{}{} ({}{})", bytes >= 0 ? "+" : "", bytes, bytes >= 0 ? "+" : "-", human);
}

std::string Human(int64_t bytes) { return HumanReadableNumBytes(Bytes(static_cast<uint64_t>(bytes))); }

void RenderDeltas(std::string_view title, const std::vector<GroupDelta>& deltas, size_t rows, std::string& out) {
  if (deltas.empty()) return;
  if (deltas.size() == rows + 1) ++rows;  // a "1 more group" line would hide no more than the group
  out += fmt::format("  by {}\n    {:>24} {:>24} {:>26}  group\n", title, "baseline", "candidate", "change");
  int64_t rest_a = 0, rest_b = 0;
  for (size_t i = 0; i < deltas.size(); ++i) {
    const GroupDelta& d = deltas[i];
    if (i >= rows) {
      rest_a += d.baseline;
      rest_b += d.candidate;
      continue;
    }
    out += fmt::format("    {:>14} {:>9} {:>14} {:>9} {:>26}  {}\n", d.baseline, Human(d.baseline), d.candidate,
                       Human(d.candidate), Signed(d.candidate - d.baseline), d.key);
  }
  if (deltas.size() > rows) {
    out += fmt::format("    {:>14} {:>9} {:>14} {:>9} {:>26}  ({} more groups)\n", rest_a, Human(rest_a), rest_b,
                       Human(rest_b), Signed(rest_b - rest_a), deltas.size() - rows);
  }
}

bool Labelled(const std::vector<MemoryGroup>& by_tag) { return !by_tag.empty() && !NothingTagged(by_tag); }

nlohmann::ordered_json DeltasJson(const std::vector<GroupDelta>& deltas) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const GroupDelta& d : deltas) {
    out.push_back(
        {{"key", d.key}, {"baseline", d.baseline}, {"candidate", d.candidate}, {"delta", d.candidate - d.baseline}});
  }
  return out;
}

}  // namespace

absl::StatusOr<MemoryBreakdown> PeakLiveBreakdown(const Scenario& scenario) {
  const PolicySpec* bound = BuiltinPolicies().LiveBytesBound();
  if (bound == nullptr) return absl::InternalError("no registered policy bounds the live bytes");
  absl::StatusOr<AllocatorConfig> config = ResolveAllocator(BuiltinPolicies(), bound->name);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::unique_ptr<ScenarioRun>> run =
      ScenarioRun::Prepare(scenario, *config, Bytes::Max(), ReplayOptions{});
  if (!run.ok()) return run.status();
  const EventReader& events = (*run)->reader();
  MemoryAttribution attribution(/*top_buffers=*/0, TopUserFrames(events));
  (*run)->engine().AddObserver(&attribution);
  absl::StatusOr<ReplaySummary> summary = (*run)->Run();
  if (!summary.ok()) return summary.status();
  return attribution.AtPeak().value_or(MemoryBreakdown{});
}

std::vector<GroupDelta> GroupDeltas(const std::vector<MemoryGroup>& baseline,
                                    const std::vector<MemoryGroup>& candidate) {
  std::map<std::string, GroupDelta> by_key;  // ordered: ties below fall back to the key
  for (const MemoryGroup& g : baseline) {
    by_key[g.key].key = g.key;
    by_key[g.key].baseline = static_cast<int64_t>(g.bytes);
  }
  for (const MemoryGroup& g : candidate) {
    by_key[g.key].key = g.key;
    by_key[g.key].candidate = static_cast<int64_t>(g.bytes);
  }
  std::vector<GroupDelta> out;
  for (auto& [key, d] : by_key) out.push_back(d);
  std::stable_sort(out.begin(), out.end(), [](const GroupDelta& a, const GroupDelta& b) {
    return std::llabs(a.candidate - a.baseline) > std::llabs(b.candidate - b.baseline);
  });
  return out;
}

std::string GroupDeltaText(const MemoryBreakdown& baseline, const MemoryBreakdown& candidate, size_t rows) {
  std::string out = fmt::format(
      "\nWhere the memory went at each peak of live bytes (baseline event {}, candidate event {}):\n",
      baseline.event.value(), candidate.event.value());
  if (!Labelled(baseline.by_tag) && !Labelled(candidate.by_tag) && baseline.by_frame.empty() &&
      candidate.by_frame.empty()) {
    return out + "  no held buffer carries a tag or a user frame: only the totals above compare\n";
  }
  if (Labelled(baseline.by_tag) || Labelled(candidate.by_tag)) {
    const std::vector<GroupDelta> tags = GroupDeltas(baseline.by_tag, candidate.by_tag);
    const std::vector<GroupDelta> ops = GroupDeltas(baseline.by_op, candidate.by_op);
    RenderDeltas("tag", tags, rows, out);
    const bool same = ops.size() == tags.size() &&
                      std::equal(ops.begin(), ops.end(), tags.begin(), [](const GroupDelta& a, const GroupDelta& b) {
                        return a.key == b.key && a.baseline == b.baseline && a.candidate == b.candidate;
                      });
    if (same) {
      out += "  by op: the same as by tag\n";
    } else {
      RenderDeltas("op", ops, rows, out);
    }
  }
  RenderDeltas("top user frame", GroupDeltas(baseline.by_frame, candidate.by_frame), rows, out);
  return out;
}

nlohmann::ordered_json GroupDeltaJson(const MemoryBreakdown& baseline, const MemoryBreakdown& candidate) {
  nlohmann::ordered_json j;
  j["baseline_peak_event"] = baseline.event.value();
  j["candidate_peak_event"] = candidate.event.value();
  j["by_tag"] = DeltasJson(GroupDeltas(baseline.by_tag, candidate.by_tag));
  j["by_op"] = DeltasJson(GroupDeltas(baseline.by_op, candidate.by_op));
  j["by_frame"] = DeltasJson(GroupDeltas(baseline.by_frame, candidate.by_frame));
  return j;
}

}  // namespace hbmsim::sim
