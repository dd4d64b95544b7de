#include "sim/policies/torch/torch_state_view.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "allocator/torch/torch_allocator.h"
#include "allocator/torch/torch_messages.h"
#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/policies/torch/torch_probe.h"
#include "sim/policies/torch/torch_state_analysis.h"

namespace hbmsim::sim {
namespace {

using torch::PoolTotals;
using torch::SegmentRow;
using torch::StateAnalysis;
using Out = std::back_insert_iterator<std::string>;
using Json = nlohmann::ordered_json;

// Segments listed in the text (the JSON has them all): those with the most free bytes.
constexpr size_t kTextSegments = 20;

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

StateView TorchStateView(const Allocator& a) {
  // The row's factory built a TorchAllocator (PolicySpec::state_analysis).
  const StateAnalysis analysis = torch::Analyze(static_cast<const torch::TorchAllocator&>(a));
  StateView view;
  Out out(view.text);
  WritePools(out, analysis);
  WriteFree(out, analysis);
  WriteSegments(out, analysis);
  view.json = Json{{"pools", InspectedPoolsJson(analysis)},
                   {"total", PoolJson(analysis.total)},
                   {"fragmentation", analysis.fragmentation},
                   {"releasable", analysis.releasable.value()},
                   {"segments", InspectedSegmentsJson(analysis)}};
  for (const torch::LiveBlock& b : analysis.biggest) {
    view.biggest.push_back({b.addr, b.size, b.requested, b.stream, b.pending_free, b.segment});
  }
  return view;
}

ProbeView TorchProbeView(const Allocator& a, Bytes size, StreamId stream) {
  const torch::ProbeAnswer p = torch::Probe(static_cast<const torch::TorchAllocator&>(a), size, stream);
  return ProbeView{p.requested, torch::FormatSize(p.requested.value()), p.rounded, p.stream,
                   p.small_pool ? "small" : "large", p.result, p.how, p.steps, p.oom_message};
}

}  // namespace

StateAnalysisSupport TorchStateAnalysis() { return {TorchStateView, TorchProbeView}; }

}  // namespace hbmsim::sim
