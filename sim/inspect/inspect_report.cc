#include "sim/inspect/inspect_report.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "allocator/torch/torch_messages.h"
#include "fmt/format.h"
#include "sim/report/user_frames.h"

namespace hbmsim::inspect {
namespace {

using Out = std::back_insert_iterator<std::string>;
using Json = nlohmann::ordered_json;

std::string TorchSizeText(Bytes b) { return fmt::format("{} ({})", b.value(), torch::FormatSize(b.value())); }

void WritePools(Out out, const StateAnalysis& a) {
  fmt::format_to(out, "\nMemory by pool and stream (memory_stats() terms, bytes):\n");
  fmt::format_to(out, "  {:<6} {:>6} {:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n", "pool",
                 "stream", "segments", "reserved", "allocated", "active", "requested", "inactive_split",
                 "free", "largest_free");
  const auto row = [&](std::string_view pool, std::string stream, const PoolTotals& t) {
    fmt::format_to(out, "  {:<6} {:>6} {:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n", pool,
                   stream, t.segments, t.reserved.value(), t.allocated.value(), t.active.value(),
                   t.requested.value(), t.inactive_split.value(), t.free.value(), t.largest_free.value());
  };
  for (const PoolTotals& t : a.pools) row(t.small ? "small" : "large", fmt::format("{:#x}", t.stream), t);
  row("all", "", a.total);
}

void WriteFree(Out out, const StateAnalysis& a) {
  const PoolTotals& t = a.total;
  fmt::format_to(out, "\nFree (cached) memory: {} in {} blocks; largest free block {}\n", TorchSizeText(t.free),
                 t.free_blocks, TorchSizeText(t.largest_free));
  fmt::format_to(out, "  fragmentation:  {:.4f} (1 - largest free block / free bytes)\n", a.fragmentation);
  fmt::format_to(out, "  empty_cache():  would release {} (unsplit free segments, whole free pages)\n",
                 TorchSizeText(a.releasable));
  fmt::format_to(out, "  inactive_split: {} cached in split segments (empty_cache() cannot release it)\n",
                 TorchSizeText(t.inactive_split));
}

void WriteSegments(Out out, const StateAnalysis& a) {
  std::vector<const SegmentRow*> rows;
  for (const SegmentRow& s : a.segments) rows.push_back(&s);
  std::stable_sort(rows.begin(), rows.end(), [](const SegmentRow* x, const SegmentRow* y) {
    return x->largest_free != y->largest_free ? x->largest_free > y->largest_free : x->base < y->base;
  });
  const size_t n = std::min(rows.size(), kTextSegments);
  fmt::format_to(out, "\nSegments: {} ({} listed, largest free block first)\n", a.segments.size(), n);
  if (n == 0) return;
  fmt::format_to(out, "  {:<18} {:<5} {:>6} {:<10} {:>14} {:>14} {:>14} {:>14} {:>6}\n", "base", "pool",
                 "stream", "kind", "reserved", "allocated", "free", "largest_free", "blocks");
  for (size_t i = 0; i < n; ++i) {
    const SegmentRow& s = *rows[i];
    fmt::format_to(out, "  {:<#18x} {:<5} {:>6} {:<10} {:>14} {:>14} {:>14} {:>14} {:>6}\n", s.base.value(),
                   s.small ? "small" : "large", fmt::format("{:#x}", s.stream),
                   s.expandable ? "expandable" : "cudaMalloc", s.reserved.value(), s.allocated.value(),
                   s.free.value(), s.largest_free.value(), s.blocks);
  }
}

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

void WriteBiggest(Out out, const InspectedState& s, const StateAnalysis& a) {
  fmt::format_to(out, "\nLargest live blocks ({}):\n", a.biggest.size());
  if (a.biggest.empty()) return;
  fmt::format_to(out, "  {:<18} {:>14} {:>14} {:>6} {:<13} {:<18}\n", "address", "size", "requested",
                 "stream", "state", "segment");
  for (const LiveBlock& b : a.biggest) {
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

void WriteProbe(Out out, const ProbeAnswer& p) {
  fmt::format_to(out, "  probe {} B ({}; rounded {} B, {} pool, stream {:#x}): {}\n", p.requested.value(),
                 torch::FormatSize(p.requested.value()), p.rounded.value(), p.small_pool ? "small" : "large",
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

Json PoolJson(const PoolTotals& t) {
  return Json{{"segments", t.segments},
              {"reserved", t.reserved.value()},
              {"allocated", t.allocated.value()},
              {"active", t.active.value()},
              {"requested", t.requested.value()},
              {"inactive_split", t.inactive_split.value()},
              {"free", t.free.value()},
              {"free_blocks", t.free_blocks},
              {"largest_free", t.largest_free.value()}};
}

}  // namespace

InspectReport MakeInspectReport(std::string file, const InspectedState& state,
                                const std::vector<Bytes>& probes, StreamId stream) {
  InspectReport report;
  report.file = std::move(file);
  report.state = &state;
  report.analysis = Analyze(*state.torch);
  report.reserved = ExplainReserved(
      *state.torch, EventIndex(0), [&state](const BlockInfo& b) { return BlockLabel(state, b.offset); }, nullptr);
  for (Bytes size : probes) report.probes.push_back(Probe(*state.torch, size, stream));
  return report;
}

bool AnyProbeFailed(const InspectReport& r) {
  return std::any_of(r.probes.begin(), r.probes.end(), [](const ProbeAnswer& p) { return !p.result.ok(); });
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
  WritePools(out, r.analysis);
  WriteFree(out, r.analysis);
  WriteSegments(out, r.analysis);
  WriteBiggest(out, s, r.analysis);
  fmt::format_to(out, "\nReserved, explained (every reserved byte in one part):\n{}",
                 RenderReservedMomentText("this state", r.reserved));
  if (!r.probes.empty()) {
    fmt::format_to(out, "\nProbes (each on a copy of this state, through the torch policy):\n");
    for (const ProbeAnswer& p : r.probes) WriteProbe(out, p);
  }
  return text;
}

namespace {

Json InspectedPoolsJson(const StateAnalysis& a) {
  Json pools = Json::array();
  for (const PoolTotals& t : a.pools) {
    Json j{{"pool", t.small ? "small" : "large"}, {"stream", t.stream}};
    j.update(PoolJson(t));
    pools.push_back(j);
  }
  return pools;
}

Json InspectedSegmentsJson(const StateAnalysis& a) {
  Json segments = Json::array();
  for (const SegmentRow& g : a.segments) {
    segments.push_back(Json{{"base", g.base.value()},
                            {"pool", g.small ? "small" : "large"},
                            {"stream", g.stream},
                            {"expandable", g.expandable},
                            {"reserved", g.reserved.value()},
                            {"allocated", g.allocated.value()},
                            {"free", g.free.value()},
                            {"largest_free", g.largest_free.value()},
                            {"blocks", g.blocks}});
  }
  return segments;
}

Json LargestLiveBlocksJson(const InspectedState& s, const StateAnalysis& a) {
  Json biggest = Json::array();
  for (const LiveBlock& b : a.biggest) {
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

Json ProbeAnswerJson(const ProbeAnswer& p) {
  Json j{{"requested", p.requested.value()},
         {"rounded", p.rounded.value()},
         {"pool", p.small_pool ? "small" : "large"},
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
  const StateAnalysis& a = r.analysis;
  Json probes = Json::array();
  for (const ProbeAnswer& p : r.probes) probes.push_back(ProbeAnswerJson(p));
  return Json{{"snapshot", r.file},
              {"source", s.source},
              {"device", s.device.value()},
              {"device_reason", s.device_reason},
              {"state", s.where},
              {"capacity", s.capacity},
              {"settings_from_snapshot", s.settings},
              {"pools", InspectedPoolsJson(a)},
              {"total", PoolJson(a.total)},
              {"fragmentation", a.fragmentation},
              {"releasable", a.releasable.value()},
              {"segments", InspectedSegmentsJson(a)},
              {"largest_live_blocks", LargestLiveBlocksJson(s, a)},
              {"reserved_explained", ReservedMomentJson(r.reserved)},
              {"probes", probes}};
}

}  // namespace hbmsim::inspect
