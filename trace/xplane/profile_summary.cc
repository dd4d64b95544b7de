#include "trace/xplane/profile_summary.h"

#include <algorithm>
#include <limits>

#include "absl/container/btree_map.h"

namespace hbmsim::trace::xplane {
namespace {

// The live chunks after record `upto` (inclusive), by op; the start state's
// live bytes form one group.
std::vector<OpBytes> LiveByOp(const ProfileDevice& dev, size_t upto, bool before_any) {
  absl::btree_map<uint64_t, std::pair<std::string, int64_t>> live;  // addr -> (op, chunk)
  int64_t before = dev.start.bytes_in_use_before;
  absl::btree_map<uint64_t, int64_t> known;  // chunks of the start state freed later
  for (const StartChunk& c : dev.start.chunks) {
    if (c.kind == StartChunkKind::kKnown) known[c.addr] = c.size;
  }
  const auto& recs = dev.recording.records;
  for (size_t i = 0; !before_any && i <= upto && i < recs.size(); ++i) {
    const MemoryRecord& r = recs[i];
    const int64_t chunk = dev.start.records[i].chunk_bytes;
    if (r.allocation) {
      live[*r.addr] = {r.tf_op.empty() ? std::string(kNoOp) : r.tf_op, chunk};
    } else if (auto it = live.find(*r.addr); it != live.end()) {
      live.erase(it);
    } else {
      before -= chunk;  // a chunk of the start state
    }
  }
  absl::btree_map<std::string, OpBytes> by_op;
  for (const auto& [addr, v] : live) {
    OpBytes& o = by_op[v.first];
    o.op = v.first;
    o.bytes += v.second;
    ++o.chunks;
  }
  std::vector<OpBytes> out;
  for (auto& [op, o] : by_op) out.push_back(o);
  if (before > 0) out.push_back({std::string(kBeforeRecording), before, 0});
  std::stable_sort(out.begin(), out.end(),
                   [](const OpBytes& a, const OpBytes& b) { return a.bytes > b.bytes; });
  return out;
}

AllocatorSummary Summarize(const ProfileDevice& dev, int64_t origin_ps) {
  AllocatorSummary s;
  s.name = dev.recording.name;
  s.allocations = dev.recording.allocations;
  s.deallocations = dev.recording.deallocations;
  s.limit = dev.start.limit;
  const auto& recs = dev.recording.records;
  if (recs.empty()) return s;
  s.start_ps = recs.front().time_ps - origin_ps;
  s.end_ps = recs.back().time_ps - origin_ps;
  s.recorded_peak = recs.back().peak_bytes_in_use;
  s.peak_bytes = dev.start.bytes_in_use_before;
  s.peak_at_start = true;
  int64_t in_use = dev.start.bytes_in_use_before;
  for (size_t i = 0; i < recs.size(); ++i) {
    const MemoryRecord& r = recs[i];
    const int64_t chunk = dev.start.records[i].chunk_bytes;
    in_use = r.bytes_allocated.value_or(in_use + (r.allocation ? chunk : -chunk));
    s.series.push_back({r.time_ps - origin_ps, in_use, r.fragmentation});
    if (in_use > s.peak_bytes) {
      s.peak_bytes = in_use;
      s.peak_record = i;
      s.peak_at_start = false;
    }
    if (r.fragmentation && (!s.max_fragmentation || *r.fragmentation > *s.max_fragmentation)) {
      s.max_fragmentation = r.fragmentation;
      s.max_fragmentation_record = i;
    }
  }
  s.at_peak = LiveByOp(dev, s.peak_record, s.peak_at_start);
  return s;
}

}  // namespace

std::vector<AllocatorSummary> SummarizeProfile(const ProfileTrace& t) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const ProfileDevice& d : t.devices) {
    if (!d.recording.records.empty()) origin = std::min(origin, d.recording.records.front().time_ps);
  }
  std::vector<AllocatorSummary> out;
  for (const ProfileDevice& d : t.devices) out.push_back(Summarize(d, origin));
  return out;
}

}  // namespace hbmsim::trace::xplane
