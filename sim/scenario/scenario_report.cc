#include "sim/scenario/scenario_report.h"

#include <iterator>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/scenario_config.h"

namespace hbmsim::sim {
namespace {

using Out = std::back_insert_iterator<std::string>;
using Json = nlohmann::ordered_json;

std::string EventText(uint64_t event, std::optional<size_t> entry, DeviceId d) {
  if (!entry) return fmt::format("event {}", event);
  return fmt::format("event {} (device_traces[{}][{}])", event, d.value(), *entry);
}

void WriteSegments(Out out, std::string_view name, const SegmentComparison& c, DeviceId d) {
  fmt::format_to(out, "  {:<16}{}/{} matched", name, c.matched(), c.recorded.size());
  if (c.simulated.size() != c.recorded.size()) fmt::format_to(out, " (simulated {})", c.simulated.size());
  if (const std::optional<size_t> k = c.first_mismatch()) {
    if (*k < c.recorded.size()) {
      const SegmentRecord& r = c.recorded[*k];
      fmt::format_to(out, "; first mismatch at {}: recorded {:#x} size {}, simulated ",
                     EventText(r.event, r.entry, d), r.addr, r.size);
    } else {
      fmt::format_to(out, "; first mismatch: an extra simulated one at event {}: ", c.simulated[*k].event);
    }
    if (*k < c.simulated.size()) {
      fmt::format_to(out, "{:#x} size {}", c.simulated[*k].addr, c.simulated[*k].size);
    } else {
      fmt::format_to(out, "none");
    }
  }
  fmt::format_to(out, "\n");
}

void WriteOom(Out out, const RecordedOom& o, DeviceId d, std::string_view printed_above) {
  fmt::format_to(out, "  {}: recorded request {} B, recorded device_free {} B\n",
                 EventText(o.event, o.entry, d), o.size.value(), o.device_free.value());
  if (o.result.ok()) {
    fmt::format_to(out, "    not reproduced: the simulated request fit at {:#x}\n", o.result.offset.value());
    return;
  }
  if (!o.message.empty() && printed_above.find(o.message) == std::string_view::npos) {
    fmt::format_to(out, "    {}\n", o.message);
  } else if (!o.message.empty()) {
    fmt::format_to(out, "    (the runtime's message for it is printed above, under \"Memory at the first failure\")\n");
  }
  fmt::format_to(out, "    hbmsim verdict: {} (rounded {} B, free {} B, largest free block {} B)\n",
                 AllocStatusName(o.result.status), o.result.rounded.value(), o.result.free_bytes.value(),
                 o.result.largest_free_block.value());
}

void WriteFigures(Out out, const FiguresCheck& f) {
  fmt::format_to(out, "\nRecorded figures (after each of the device's records):\n");
  for (int m = 0; m < kNumFigureMeasures; ++m) {
    const FigureCount& c = f.count(static_cast<FigureMeasure>(m));
    fmt::format_to(out, "  {:<18} {}/{} matched", FigureMeasureName(static_cast<FigureMeasure>(m)), c.matched,
                   c.total);
    if (c.first_mismatch) fmt::format_to(out, "; first mismatch at {}", *c.first_mismatch);
    fmt::format_to(out, "\n");
  }
}

Json FiguresJson(const FiguresCheck& f) {
  Json j = Json::object();
  for (int m = 0; m < kNumFigureMeasures; ++m) {
    const FigureCount& c = f.count(static_cast<FigureMeasure>(m));
    Json one{{"matched", c.matched}, {"total", c.total}};
    one["first_mismatch"] = c.first_mismatch ? Json(*c.first_mismatch) : Json(nullptr);
    j[std::string(FigureMeasureName(static_cast<FigureMeasure>(m)))] = one;
  }
  return j;
}

Json SegmentsJson(const SegmentComparison& c) {
  return Json{{"matched", c.matched()}, {"recorded", c.recorded.size()}, {"simulated", c.simulated.size()}};
}

}  // namespace

bool HasScenarioSection(const Scenario& scenario) {
  // A converted recording's header settings are shown where they came from.
  return scenario.start_summary.has_value() || scenario.recording->facts().records_side_entries ||
         scenario.devices.size() > 1 || HasHeaderSettings(*scenario.recording);
}

namespace {

// The settings taken, the start state as recorded, the recorded limit.
void WriteRecordingHeader(Out out, const ScenarioReportInput& in) {
  const Scenario& sc = *in.scenario;
  fmt::format_to(out, "\n{}, device {}:\n", sc.recording->facts().description, sc.DeviceText());
  fmt::format_to(out, "  settings:     {}\n",
                 in.applied_settings.empty()
                     ? std::string("none taken from the recording")
                     : fmt::format("{} (from the recording)", fmt::join(in.applied_settings, " ")));
  if (sc.start_summary) {
    const StartSummary& init = *sc.start_summary;
    fmt::format_to(out,
                   "  start state:  {} segments ({} B reserved), {} live blocks ({} freed during the trace), "
                   "{} issues\n",
                   init.segments, init.reserved.value(), init.live_blocks, init.live_blocks_freed_in_trace,
                   init.issues);
    if (init.peak_before) fmt::format_to(out, "  peak before:  {} B (recorded)\n", init.peak_before->value());
    for (const std::string& note : init.notes) fmt::format_to(out, "  inferred:     {}\n", note);
  }
  if (sc.recorded_limit) {
    fmt::format_to(out, "  limit:        {} B = {}\n", sc.recorded_limit->limit.value(), sc.recorded_limit->how);
  }
}

// What became of the start state in this run: refused, seeded or placed.
void WriteStartOutcome(Out out, const ScenarioReportInput& in) {
  const Scenario& sc = *in.scenario;
  const StartStateOutcome& st = in.run->start();
  if (st.refused) {
    fmt::format_to(out,
                   "  REFUSED:      the start state's {} B reserved in {} segments do not fit under the limit {} "
                   "B: nothing was replayed (--start-state place allocates its {} live blocks through the "
                   "policy instead)\n",
                   st.reserved.value(), st.segments, in.limit.value(), st.live_blocks);
  } else if (st.seeded) {
    fmt::format_to(out,
                   "  seeded:       {} segments, {} live blocks (events 0-{}: their tag=preexisting allocs)\n",
                   st.segments, st.live_blocks, st.live_blocks);
  } else if (sc.start_summary && sc.start_summary->live_blocks > 0 && sc.start_state.empty()) {
    fmt::format_to(out, "  placed:       by the trace's own start-state events, before its first record\n");
  } else if (sc.start_summary && sc.start_summary->live_blocks > 0) {
    fmt::format_to(out, "  placed:       the start state's live blocks were allocated through the policy ({})\n",
                   sc.start_mode == StartStateMode::kPlace ? "--start-state place"
                                                           : "the policy takes no start state");
  }
}

// --check-recorded: the simulated addresses against the recorded ones.
void WriteRecordedCheck(Out out, const RecordingChecker& checker, DeviceId d) {
  const RecordedCheck c = checker.Check();
  fmt::format_to(out, "\nRecorded check: allocs {}/{}, segments {}/{}\n", c.allocs_matched, c.allocs_total,
                 c.segments_matched, c.segments_total);
  if (const auto& m = checker.first_alloc_mismatch()) {
    fmt::format_to(out, "  first alloc mismatch at {}: recorded {:#x}, simulated {}\n",
                   EventText(m->event, m->entry, d), m->recorded, m->simulated);
  }
  if (checker.history_total() > 0 || checker.history_past() > 0) {
    fmt::format_to(out,
                   "  gen1 history:   {}/{} live blocks at their recorded address (history[0]); {} older "
                   "entries not compared (allocations made before the snapshot)\n",
                   checker.history_matched(), checker.history_total(), checker.history_past());
  }
  if (const auto& m = checker.first_history_mismatch()) {
    fmt::format_to(out, "  first history mismatch: recorded {:#x} ({} B requested), simulated {}\n", m->addr,
                   m->requested, m->simulated);
  }
  WriteSegments(out, "segment_alloc", checker.segment_allocs(), d);
  WriteSegments(out, "segment_map", checker.maps(), d);
  WriteSegments(out, "segment_free", checker.segment_frees(), d);
  WriteSegments(out, "segment_unmap", checker.unmaps(), d);
}

// What the recording's side entries say next to the replay: empty_cache
// calls, the recorded check, the recorded OOMs, the runtime's summary.
void WriteSideEntries(Out out, const ScenarioReportInput& in, const RecordingChecker& checker, DeviceId d) {
  if (checker.empty_cache_calls() > 0) {
    fmt::format_to(out, "  empty_cache:  {} calls (recorded segment_free the policy had not done)\n",
                   checker.empty_cache_calls());
  }
  if (in.check_recorded) WriteRecordedCheck(out, checker, d);
  if (!checker.ooms().empty()) {
    fmt::format_to(out, "\nRecorded OOMs replayed ({}):\n", checker.ooms().size());
    for (const RecordedOom& o : checker.ooms()) WriteOom(out, o, d, in.printed_above);
  }
  // The runtime's summary prints once: the failure's text above carries it.
  if (in.config->policy->recording.summary_text && in.printed_above.empty()) {
    fmt::format_to(out, "\n{}\n", in.config->policy->recording.summary_text(in.run->policy()));
  }
}

}  // namespace

std::string ScenarioText(const ScenarioReportInput& in) {
  std::string text;
  Out out(text);
  const Scenario& sc = *in.scenario;
  const DeviceId d = sc.device.value_or(DeviceId(0));
  WriteRecordingHeader(out, in);
  WriteStartOutcome(out, in);
  if (sc.recorded_oom) {
    fmt::format_to(out, "  oom capacity: {} B = {} B reserved at device_traces[{}][{}] + its device_free {} B\n",
                   sc.recorded_oom->capacity.value(), sc.recorded_oom->reserved.value(), d.value(),
                   sc.recorded_oom->entry, sc.recorded_oom->device_free.value());
  }
  const RecordingChecker* checker = in.run->checker();
  if (checker == nullptr) return text;
  if (checker->figures()) WriteFigures(out, *checker->figures());
  if (sc.recording->facts().records_side_entries) WriteSideEntries(out, in, *checker, d);
  return text;
}

Json ScenarioJson(const ScenarioReportInput& in) {
  const Scenario& sc = *in.scenario;
  const ScenarioRun& run = *in.run;
  Json devices = Json::array();
  for (const DeviceEvents& d : sc.devices) {
    Json one{{"device", d.device.value()}, {"events", d.events}, {"recorded_oom", d.recorded_oom}};
    if (!d.name.empty()) one["name"] = d.name;
    if (d.host_memory) one["host_memory"] = true;
    devices.push_back(one);
  }
  Json j{{"format", TraceFormatName(sc.recording->format())},
         {"description", sc.recording->facts().description},
         {"device", sc.device ? Json(sc.device->value()) : Json(nullptr)},
         {"device_reason", sc.device_reason},
         {"devices", devices},
         {"settings_from_recording", in.applied_settings},
         {"start_state_mode", StartStateModeName(sc.start_mode)},
         {"start_state_refused", run.start().refused}};
  if (sc.start_summary) {
    j["initial_segments"] = sc.start_summary->segments;
    j["initial_live_blocks"] = sc.start_summary->live_blocks;
    j["initial_reserved_bytes"] = sc.start_summary->reserved.value();
    j["initial_live_bytes"] = sc.start_summary->live_bytes.value();
    if (sc.start_summary->peak_before) j["peak_before"] = sc.start_summary->peak_before->value();
    j["start_state_notes"] = sc.start_summary->notes;
  }
  if (sc.recorded_limit) {
    j["recorded_limit"] = Json{{"limit", sc.recorded_limit->limit.value()}, {"how", sc.recorded_limit->how}};
  }
  if (sc.recorded_oom) {
    j["oom_capacity"] = Json{{"capacity", sc.recorded_oom->capacity.value()},
                             {"reserved", sc.recorded_oom->reserved.value()},
                             {"device_free", sc.recorded_oom->device_free.value()},
                             {"entry", sc.recorded_oom->entry}};
  }
  const RecordingChecker* checker = run.checker();
  if (checker == nullptr) return j;
  if (checker->figures()) j["recorded_figures"] = FiguresJson(*checker->figures());
  if (!sc.recording->facts().records_side_entries) return j;
  j["empty_cache_calls"] = checker->empty_cache_calls();
  j["segment_alloc"] = SegmentsJson(checker->segment_allocs());
  j["segment_map"] = SegmentsJson(checker->maps());
  j["segment_free"] = SegmentsJson(checker->segment_frees());
  j["segment_unmap"] = SegmentsJson(checker->unmaps());
  j["history_addresses"] = Json{{"matched", checker->history_matched()},
                                {"total", checker->history_total()},
                                {"not_compared", checker->history_past()}};
  Json ooms = Json::array();
  for (const RecordedOom& o : checker->ooms()) {
    ooms.push_back(Json{{"event", o.event},
                        {"entry", o.entry ? Json(*o.entry) : Json(nullptr)},
                        {"size", o.size.value()},
                        {"device_free", o.device_free.value()},
                        {"kind", AllocStatusName(o.result.status)},
                        {"message", o.message}});
  }
  j["recorded_ooms"] = ooms;
  return j;
}

}  // namespace hbmsim::sim
