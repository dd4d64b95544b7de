// The reports of one replay: the text report for people (stdout) and the JSON
// report for tools (--json). Both read the same inputs; the JSON keys the CLI
// contract fixes (allocator, stats, failures, peak_live_bytes, recorded_check)
// are always present.
#ifndef HBMSIM_SIM_REPORT_REPLAY_REPORT_H_
#define HBMSIM_SIM_REPORT_REPLAY_REPORT_H_

#include <string>

#include "allocator/core/allocator.h"
#include "nlohmann/json.hpp"
#include "sim/config/allocator_config.h"
#include "sim/engine/replay_engine.h"
#include "sim/layer.h"
#include "sim/report/memory_attribution.h"
#include "sim/report/replay_recorder.h"
#include "sim/report/reserved_explained.h"

namespace hbmsim::sim {

struct ReplayReportInput {
  std::string trace;         // the path as given
  std::string limit_source;  // "--bytes-limit", "config", "--set", "trace metadata device_bytes"
  Bytes bytes_limit;
  const AllocatorConfig* config = nullptr;
  const Allocator* allocator = nullptr;
  const ReplaySummary* summary = nullptr;
  const ReplayRecorder* recorder = nullptr;
  // Where the memory went; null: the reports leave that section out.
  const MemoryAttribution* attribution = nullptr;
  // Reserved, explained (Finish()ed); null: the reports leave it out.
  const ReservedExplainer* reserved = nullptr;
  // The advice section (sim/whatif/advice), already rendered; "" for none.
  std::string advice_text;
  nlohmann::ordered_json advice_json;  // null: no "advice" key in the JSON
  // A recording that began warm (sim/whatif/fresh_start.h): both minimum
  // limits, as recorded and from a fresh start, already rendered; the verdict
  // ends with the text, the JSON carries "start_answers". "" / null: none.
  std::string start_answers_text;
  nlohmann::ordered_json start_answers_json;
  // Reserved bytes explained (issue 46, item 1; built elsewhere): {"peak" |
  // "first_failure" | "end": {"reserved": N, "parts": [{"cause": ..., "bytes":
  // N, ...}]}}. The HTML report draws each moment as a stacked bar
  // (sim/viz/reserved_chart.h); null: no such section.
  nlohmann::ordered_json reserved_explained;
  ReplayOptions options;
};

// Failures listed one per line in the text report; the rest are counted.
inline constexpr size_t kMaxListedFailures = 50;

// The whole report, the answer first: the verdict, the failing request, where
// the memory was, the advice, then the details (DetailsText).
std::string TextReport(const ReplayReportInput& in);
// The details: header, stats, the lower bound, the failure table and the
// memory at the first failure.
std::string DetailsText(const ReplayReportInput& in);
// The --json report. Its "failures" lists the failures the recorder kept
// (ReplayRecorder::kKeptFailures); `hbmsim replay` writes the whole list
// through a FailureSpill instead (failure_spill.h).
nlohmann::ordered_json JsonReport(const ReplayReportInput& in);
// One element of "failures".
nlohmann::ordered_json FailureJson(const FailureRecord& f, const FailureLabels& labels,
                                   const std::string& mark_before);

// The options that run (PolicySpec::effective_options: an alloc_conf key shows
// as the option it sets), in declaration order.
OptionValues EffectiveOptions(const AllocatorConfig& config);
// "allow_growth=false garbage_collection=true ..." of EffectiveOptions.
std::string EffectiveOptionsText(const AllocatorConfig& config);

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_REPORT_REPLAY_REPORT_H_
