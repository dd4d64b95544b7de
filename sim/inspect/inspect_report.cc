#include "sim/inspect/inspect_report.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "fmt/format.h"
#include "sim/report/user_frames.h"

namespace hbmsim::sim::inspect {
namespace {

using Out = std::back_insert_iterator<std::string>;
using Json = nlohmann::ordered_json;

// The recorded stack of a live block: its user frames (innermost first), or
// when it has none its innermost frames, and how many were recorded.
struct BlockStack {
  std::vector<std::string> shown;
  size_t recorded = 0;
  bool user = false;
};

BlockStack StackOf(const InspectedState& s, Offset addr, size_t most) {
  BlockStack out;
  const ContextTable* table = s.recording ? s.recording->facts().context_table.get() : nullptr;
  auto it = s.frames.find(addr.value());
  if (table == nullptr || it == s.frames.end()) return out;
  std::vector<StackFrame> frames;
  for (uint32_t id : table->list(it->second)) frames.push_back(table->frame(id));
  out.recorded = frames.size();
  std::vector<StackFrame> user = UserFrames(frames);
  out.user = !user.empty();
  const std::vector<StackFrame>& pick = out.user ? user : frames;
  for (size_t i = 0; i < pick.size() && out.shown.size() < most; ++i) out.shown.push_back(FrameText(pick[i]));
  return out;
}

// The innermost user frame of a live block's recorded stack, for the
// explanation's requested parts; blocks with none share one label.
std::string BlockLabel(const InspectedState& s, Offset addr) {
  const ContextTable* table = s.recording ? s.recording->facts().context_table.get() : nullptr;
  auto it = s.frames.find(addr.value());
  if (table == nullptr || it == s.frames.end()) return "(no user frame recorded)";
  std::vector<StackFrame> frames;
  for (uint32_t id : table->list(it->second)) frames.push_back(table->frame(id));
  const std::vector<StackFrame> user = UserFrames(frames);
  return user.empty() ? "(no user frame recorded)" : ShortFrameText(user.front());
}

void WriteBiggest(Out out, const InspectedState& s, const StateView& a) {
  fmt::format_to(out, "\nLargest live blocks ({}):\n", a.biggest.size());
  if (a.biggest.empty()) return;
  fmt::format_to(out, "  {:<18} {:>14} {:>14} {:>6} {:<13} {:<18}\n", "address", "size", "requested",
                 "stream", "state", "segment");
  for (const LiveBlockView& b : a.biggest) {
    fmt::format_to(out, "  {:<#18x} {:>14} {:>14} {:>6} {:<13} {:<#18x}\n", b.addr.value(), b.size.value(),
                   b.requested.value(), fmt::format("{:#x}", b.stream),
                   b.pending_free ? "pending_free" : "allocated", b.segment.value());
    const BlockStack stack = StackOf(s, b.addr, 3);
    if (stack.recorded == 0) continue;
    fmt::format_to(
        out, "      {} of {} frames{}:\n", stack.shown.size(), stack.recorded,
        stack.user ? " (the user's own code, innermost first)" : " (innermost first; none is user code)");
    for (const std::string& f : stack.shown) fmt::format_to(out, "        {}\n", f);
  }
  if (s.frames.empty())
    fmt::format_to(out, "  (no stack frames: the snapshot recorded none for these blocks)\n");
}

void WriteProbe(Out out, const ProbeView& p) {
  fmt::format_to(out, "  probe {} B ({}; rounded {} B, {} pool, stream {:#x}): {}\n", p.requested.value(),
                 p.requested_text, p.rounded.value(), p.pool,
                 p.stream.value(), p.result.ok() ? "fits" : "FAILS");
  for (const std::string& s : p.steps) fmt::format_to(out, "    step: {}\n", s);
  if (p.result.ok()) {
    fmt::format_to(out, "    served: {}\n", p.how);
    return;
  }
  if (!p.oom_message.empty()) fmt::format_to(out, "    {}\n", p.oom_message);
  fmt::format_to(out, "    hbmsim verdict: {} (free {} B, largest free block {} B)\n",
                 AllocStatusName(p.result.status), p.result.free_bytes.value(),
                 p.result.largest_free_block.value());
}

}  // namespace

InspectReport MakeInspectReport(std::string file, const InspectedState& state,
                                const std::vector<Bytes>& probes, StreamId stream) {
  InspectReport report;
  report.file = std::move(file);
  report.state = &state;
  const StateAnalysisSupport& analysis = state.row->state_analysis;
  report.view = analysis.analyze(*state.policy);
  report.reserved = ExplainReserved(
      *state.policy, EventIndex(0), [&state](const BlockInfo& b) { return BlockLabel(state, b.offset); }, nullptr);
  for (Bytes size : probes) report.probes.push_back(analysis.probe(*state.policy, size, stream));
  return report;
}

bool AnyProbeFailed(const InspectReport& r) {
  return std::any_of(r.probes.begin(), r.probes.end(), [](const ProbeView& p) { return !p.result.ok(); });
}

std::string RenderInspectText(const InspectReport& r) {
  std::string text;
  Out out(text);
  const InspectedState& s = *r.state;
  fmt::format_to(out, "hbmsim inspect\n");
  fmt::format_to(out, "  snapshot:  {} ({})\n", r.file, s.source);
  fmt::format_to(out, "  device:    {} ({})\n", s.device.value(), s.device_reason);
  fmt::format_to(out, "  state:     {}\n", s.where);
  fmt::format_to(out, "  capacity:  {}\n", s.capacity);
  fmt::format_to(out, "  settings:  {}\n",
                 s.settings.empty() ? std::string("none taken from the snapshot")
                                    : fmt::format("{} (from the snapshot)", fmt::join(s.settings, " ")));
  for (const std::string& n : s.notes) fmt::format_to(out, "  note:      {}\n", n);
  text += r.view.text;
  WriteBiggest(out, s, r.view);
  fmt::format_to(out, "\nReserved, explained (every reserved byte in one part):\n{}",
                 RenderReservedMomentText("this state", r.reserved));
  if (!r.probes.empty()) {
    fmt::format_to(out, "\nProbes (each on a copy of this state, through the {} policy):\n", s.row->name);
    for (const ProbeView& p : r.probes) WriteProbe(out, p);
  }
  return text;
}

namespace {

Json LargestLiveBlocksJson(const InspectedState& s, const StateView& a) {
  Json biggest = Json::array();
  for (const LiveBlockView& b : a.biggest) {
    const BlockStack stack = StackOf(s, b.addr, SIZE_MAX);
    biggest.push_back(Json{{"address", b.addr.value()},
                           {"size", b.size.value()},
                           {"requested", b.requested.value()},
                           {"stream", b.stream},
                           {"pending_free", b.pending_free},
                           {"segment", b.segment.value()},
                           {"frames_recorded", stack.recorded},
                           {stack.user ? "user_frames" : "frames", stack.shown}});
  }
  return biggest;
}

Json ProbeAnswerJson(const ProbeView& p) {
  Json j{{"requested", p.requested.value()},
         {"rounded", p.rounded.value()},
         {"pool", p.pool},
         {"stream", p.stream.value()},
         {"ok", p.result.ok()},
         {"steps", p.steps}};
  if (p.result.ok()) {
    j["address"] = p.result.offset.value();
    j["block_size"] = p.result.size.value();
    j["how"] = p.how;
  } else {
    j["verdict"] = AllocStatusName(p.result.status);
    j["message"] = p.oom_message;
    j["free_bytes"] = p.result.free_bytes.value();
    j["largest_free_block"] = p.result.largest_free_block.value();
  }
  return j;
}

}  // namespace

Json RenderInspectJson(const InspectReport& r) {
  const InspectedState& s = *r.state;
  Json probes = Json::array();
  for (const ProbeView& p : r.probes) probes.push_back(ProbeAnswerJson(p));
  Json out{{"snapshot", r.file},
           {"source", s.source},
           {"device", s.device.value()},
           {"device_reason", s.device_reason},
           {"state", s.where},
           {"capacity", s.capacity},
           {"settings_from_snapshot", s.settings}};
  for (const auto& [key, value] : r.view.json.items()) out[key] = value;
  out["largest_live_blocks"] = LargestLiveBlocksJson(s, r.view);
  out["reserved_explained"] = ReservedMomentJson(r.reserved);
  out["probes"] = std::move(probes);
  return out;
}

}  // namespace hbmsim::sim::inspect
