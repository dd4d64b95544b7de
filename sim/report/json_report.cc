// The --json report. Keys fixed by the CLI contract come first, in contract
// order; extras (counters, policy events, summary counts) follow. ordered_json
// keeps insertion order, so two runs write byte-identical files.
#include <variant>

#include "sim/report/replay_report.h"
#include "sim/report/user_frames.h"
#include "sim/report/verdict.h"

namespace hbmsim::sim {
namespace {

using Json = nlohmann::ordered_json;

Json OptionJson(const OptionValue& v) {
  struct ToJson {
    Json operator()(bool b) const { return b; }
    Json operator()(int64_t i) const { return i; }
    Json operator()(Bytes b) const { return b.value(); }
    Json operator()(double d) const { return d; }
    Json operator()(const std::string& s) const { return s; }
  };
  return std::visit(ToJson{}, v);
}

// A stat with no bound (kUnlimitedStat) is null, like a stat the policy lacks.
Json Stat(int64_t v) { return IsUnlimitedStat(v) ? Json(nullptr) : Json(v); }
Json Optional(const std::optional<int64_t>& v) { return v ? Stat(*v) : Json(nullptr); }

Json StatsJson(const AllocatorStats& s) {
  return Json{{"num_allocs", s.num_allocs},
              {"bytes_in_use", s.bytes_in_use},
              {"peak_bytes_in_use", s.peak_bytes_in_use},
              {"largest_alloc_size", s.largest_alloc_size},
              {"bytes_limit", Optional(s.bytes_limit)},
              {"bytes_reserved", s.bytes_reserved},
              {"peak_bytes_reserved", s.peak_bytes_reserved},
              {"bytes_reservable_limit", Optional(s.bytes_reservable_limit)},
              {"largest_free_block_bytes", Stat(s.largest_free_block_bytes)},
              {"pool_bytes", Optional(s.pool_bytes)},
              {"peak_pool_bytes", Optional(s.peak_pool_bytes)}};
}

}  // namespace

Json FailureJson(const FailureRecord& f, const FailureLabels& labels, const std::string& mark_before) {
  Json j{{"event", f.event.value()},
         {"id", f.id},
         {"requested", f.requested.value()},
         {"rounded", f.rounded.value()},
         {"kind", AllocStatusName(f.kind)},
         {"free_bytes", f.free_bytes.value()},
         {"largest_free_block_bytes", f.largest_free_block_bytes.value()}};
  if (f.event_kind != EventKind::kAlloc) j["event_kind"] = EventKindName(f.event_kind);
  if (!mark_before.empty()) j["after_mark"] = mark_before;
  if (!labels.tag.empty()) j["tag"] = labels.tag;
  if (!labels.shape.empty()) j["shape"] = labels.shape;
  return j;
}

namespace {

Json SummaryJson(const ReplaySummary& s) {
  Json j{{"events_read", s.events_read},
         {"events_replayed", s.events_replayed},
         {"events_other_device", s.events_other_device},
         {"device", s.device ? Json(s.device->value()) : Json(nullptr)},
         {"allocs", s.allocs},
         {"failures", s.failures},
         {"ignored_frees", s.ignored_frees},
         {"marks", s.marks},
         {"stopped_at_failure", s.stopped_at_failure},
         {"peak_live_event", s.peak_live_event ? Json(s.peak_live_event->value()) : Json(nullptr)}};
  if (s.start_state_allocs > 0) j["start_state_allocs"] = s.start_state_allocs;  // absent when none
  if (s.events_with_other_attributes > 0) {  // absent when none, as before open attributes
    j["other_attributes"] =
        Json{{"events", s.events_with_other_attributes}, {"keys", s.other_attribute_keys}};
  }
  return j;
}

// The first failed request's user frames, innermost first, and how many the
// recording kept in all.
Json UserFramesJson(const std::vector<StackFrame>& frames) {
  Json user = Json::array();
  for (const StackFrame& f : UserFrames(frames)) {
    user.push_back(Json{{"filename", f.filename}, {"line", f.line}, {"name", f.name}});
  }
  return Json{{"recorded", frames.size()}, {"user", user}};
}

}  // namespace

nlohmann::ordered_json JsonReport(const ReplayReportInput& in) {
  Json options = Json::object();
  const OptionValues ran = EffectiveOptions(*in.config);
  for (const auto& [name, value] : ran.entries()) options[name] = OptionJson(value);
  Json failures = Json::array();
  const std::vector<FailureRecord>& recorded = in.recorder->failures();
  for (size_t i = 0; i < recorded.size(); ++i)
    failures.push_back(FailureJson(recorded[i], in.recorder->labels(i), in.recorder->mark_before(i)));
  Json j;
  j["trace"] = in.trace;
  j["allocator"] =
      Json{{"name", in.config->policy->name},
           {"source", in.config->source},
           {"bytes_limit", in.bytes_limit == Bytes::Max() ? Json(nullptr) : Json(in.bytes_limit.value())},
           {"bytes_limit_source", in.limit_source},
           {"options", options}};
  j["stats"] = StatsJson(in.allocator->GetStats());
  j["failures"] = failures;
  j["peak_live_bytes"] = in.summary->peak_live_bytes.value();
  if (!recorded.empty()) j["failing_request_frames"] = UserFramesJson(in.recorder->first_failure_frames());
  if (in.attribution != nullptr) j["memory"] = Json(MemoryAttributionJson(*in.attribution));
  if (in.reserved != nullptr) j["reserved_explained"] = ReservedExplainedJson(*in.reserved);
  if (in.options.check_recorded) {
    const RecordedCheck& r = in.summary->recorded;
    j["recorded_check"] = Json{{"allocs_matched", r.allocs_matched},
                               {"allocs_total", r.allocs_total},
                               {"segments_matched", r.segments_matched},
                               {"segments_total", r.segments_total}};
  }
  j["on_oom"] = in.options.on_oom == OnOom::kStop ? "stop" : "continue";
  j["summary"] = SummaryJson(*in.summary);
  j["verdict"] = VerdictText(in);
  Json counters = Json::object();
  Counters list;
  in.allocator->AppendCounters(list);
  for (const Counter& c : list) counters[c.name] = Stat(c.value);
  j["counters"] = counters;
  Json events = Json::object();
  for (const auto& [name, count] : in.recorder->PolicyEventCounts()) events[std::string(name)] = count;
  j["policy_events"] = events;
  if (!in.advice_json.is_null()) j["advice"] = in.advice_json;
  if (!in.start_answers_json.is_null()) j["start_answers"] = in.start_answers_json;
  return j;
}

}  // namespace hbmsim::sim
