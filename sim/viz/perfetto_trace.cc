#include "sim/viz/perfetto_trace.h"

#include <string>

namespace hbmsim::sim::viz {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPid = 1;
constexpr int kCountersTid = 1, kEventsTid = 2, kMarksTid = 3;

Json Meta(std::string_view what, int tid, std::string_view name) {
  Json m = {{"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"name", what}};
  m["args"] = {{"name", name}};
  return m;
}

void AddCounters(const Timeline& t, Json& events) {
  const uint64_t w = t.events_per_column();
  for (size_t c = 0; c < t.columns().size(); ++c) {
    const Column& col = t.columns()[c];
    if (!col.sampled) continue;
    for (int s = 0; s < kSeriesCount; ++s) {
      const std::string name(SeriesName(s));
      events.push_back({{"ph", "C"},
                        {"pid", kPid},
                        {"tid", kCountersTid},
                        {"name", name},
                        {"ts", c * w},
                        {"args", {{"bytes", col.max[s]}}}});
      if (w > 1 && col.min[s] != col.max[s]) {
        events.push_back({{"ph", "C"},
                          {"pid", kPid},
                          {"tid", kCountersTid},
                          {"name", name},
                          {"ts", c * w + w / 2},
                          {"args", {{"bytes", col.min[s]}}}});
      }
    }
  }
}

void AddInstants(const std::vector<Instant>& list, std::string_view category, Json& events) {
  for (const Instant& i : list) {
    events.push_back({{"ph", "i"},
                      {"s", "t"},  // on the thread track named for them
                      {"pid", kPid},
                      {"tid", kEventsTid},
                      {"cat", category},
                      {"name", i.name},
                      {"ts", i.event},
                      {"args", {{"event", i.event}, {"detail", i.detail}}}});
  }
}

void AddMarks(const std::vector<Instant>& marks, uint64_t end, Json& events) {
  for (size_t k = 0; k < marks.size(); ++k) {
    const uint64_t from = marks[k].event;
    const uint64_t to = k + 1 < marks.size() ? marks[k + 1].event : std::max(end, from + 1);
    events.push_back({{"ph", "X"},
                      {"pid", kPid},
                      {"tid", kMarksTid},
                      {"cat", "mark"},
                      {"name", marks[k].name},
                      {"ts", from},
                      {"dur", to - from},
                      {"args", {{"event", from}}}});
  }
}

}  // namespace

nlohmann::ordered_json PerfettoTrace(const VizRecorder& viz, std::string_view allocator_name) {
  Json events = Json::array();
  events.push_back(Meta("process_name", 0, std::string("hbmsim ") + std::string(allocator_name)));
  events.push_back(Meta("thread_name", kCountersTid, "memory"));
  events.push_back(Meta("thread_name", kEventsTid, "failures and policy events"));
  events.push_back(Meta("thread_name", kMarksTid, "marks"));
  AddCounters(viz.timeline(), events);
  AddInstants(viz.failures(), "failure", events);
  AddInstants(viz.policy_events(), "policy", events);
  AddMarks(viz.marks(), viz.timeline().events(), events);
  Json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ms";
  out["otherData"] = {{"time_axis", "1 us = 1 trace event (ts is the event index)"},
                      {"events_per_column", viz.timeline().events_per_column()},
                      {"peak_bytes_in_use", viz.timeline().Max(kBytesInUse)},
                      {"dropped_instants", viz.dropped_instants()}};
  return out;
}

}  // namespace hbmsim::sim::viz
