#include "trace/xla/xla_trace.h"

#include <algorithm>
#include <tuple>

#include "fmt/format.h"

namespace hbmsim::trace::xla {
namespace {

// One alloc or free of an interval, ordered by the tie rule of the header.
struct Edge {
  uint64_t time = 0;
  int phase = 0;  // 0 = alloc, 1 = free: allocs of a time come first
  uint64_t id = 0;
  const LiveInterval* interval = nullptr;

  auto Key() const { return std::tie(time, phase, id); }
};

OwnedEvent EdgeEvent(const Edge& edge) {
  OwnedEvent o;
  o.event.kind = edge.phase == 0 ? EventKind::kAlloc : EventKind::kFree;
  o.event.id = edge.id;
  o.event.time_us = edge.time;
  if (edge.phase == 0) {
    o.event.bytes = edge.interval->size;
    o.event.addr = edge.interval->addr;
    o.tag = TagSafe(edge.interval->name);
  }
  o.get();
  return o;
}

}  // namespace

std::string TagSafe(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') c = '_';
  }
  return out;
}

std::vector<OwnedEvent> IntervalsToEvents(const std::vector<LiveInterval>& intervals) {
  std::vector<Edge> edges;
  edges.reserve(intervals.size() * 2);
  for (const LiveInterval& v : intervals) {
    edges.push_back({v.start, 0, v.id, &v});
    edges.push_back({v.end, 1, v.id, &v});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.Key() < b.Key(); });
  std::vector<OwnedEvent> events;
  events.reserve(edges.size());
  for (const Edge& edge : edges) events.push_back(EdgeEvent(edge));
  return events;
}

absl::StatusOr<bool> XlaEventReader::Next(Event& e) {
  if (next_ >= trace_.events.size()) return false;
  e = trace_.events[next_++].get();
  return true;
}

std::string XlaEventReader::Location() const {
  return fmt::format("{}: event {}", trace_.source, std::max<size_t>(next_, 1));
}

}  // namespace hbmsim::trace::xla
