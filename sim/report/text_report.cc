// The text report of `hbmsim replay` (stdout). Layout, the answer first:
//
//   the verdict paragraph and the failing request (verdict.cc)
//   where the memory was at the first failure and at the peak
//   reserved, explained (reserved_explained.h)
//   the advice (when something failed and the command computed it)
//   then the details:
//   header (trace, allocator and options, limit, events)
//   stats in TF's DebugString layout, pool bytes, policy counters and events
//   the lower bound (peak live bytes) and the overhead over it
//   the failed allocations (at most kMaxListedFailures, then a count)
//   the memory dump at the first failure
#include <iterator>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/dumps/stats_text.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "sim/report/verdict.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using Out = std::back_insert_iterator<std::string>;

std::string WithHuman(int64_t bytes) { return fmt::format("{} ({})", bytes, HumanReadableNumBytes(bytes)); }
std::string WithHuman(Bytes bytes) {
  return fmt::format("{} ({})", bytes.value(), HumanReadableNumBytes(bytes));
}

std::string LimitText(Bytes limit) { return limit == Bytes::Max() ? "unlimited" : WithHuman(limit); }

void WriteHeader(Out out, const ReplayReportInput& in) {
  const ReplaySummary& s = *in.summary;
  fmt::format_to(out, "hbmsim replay\n");
  fmt::format_to(out, "  trace:      {}\n", in.trace);
  fmt::format_to(out, "  allocator:  {} ({})\n", in.config->policy->name, in.config->source);
  fmt::format_to(out, "  options:    {}\n", EffectiveOptionsText(*in.config));
  fmt::format_to(out, "  limit:      {} from {}\n", LimitText(in.bytes_limit), in.limit_source);
  fmt::format_to(out, "  events:     {} replayed of {} read", s.events_replayed, s.events_read);
  if (s.device)
    fmt::format_to(out, " (device {}, {} on other devices skipped)", s.device->value(),
                   s.events_other_device);
  fmt::format_to(out, "\n  on-oom:     {}{}\n", in.options.on_oom == OnOom::kStop ? "stop" : "continue",
                 s.stopped_at_failure ? " (stopped at the first failure)" : "");
  if (s.events_with_other_attributes > 0) {
    fmt::format_to(out, "  attributes: {} events carry attributes the replay does not use: {}{}\n",
                   s.events_with_other_attributes, fmt::join(s.other_attribute_keys, ", "),
                   s.other_attribute_keys.size() == ReplaySummary::kMaxOtherKeys ? ", ..." : "");
  }
  const ReplayRecorder& r = *in.recorder;
  if (s.start_state_refused) {
    fmt::format_to(out, "  outcome:    the start state does not fit under the limit: nothing replayed (1 oom at event 0)\n");
    return;
  }
  fmt::format_to(out, "  outcome:    {} of {} allocations failed ({} oom, {} fragmentation)\n", s.failures,
                 s.allocs, r.oom_failures(), r.fragmentation_failures());
  if (s.start_state_allocs > 0) {
    fmt::format_to(out,
                   "              {} of them build the state the recording began in (its start state); the "
                   "peak and the allocator's stats count from there\n",
                   s.start_state_allocs);
  }
  // The stats' num_allocs counts blocks handed out; a 0-byte request gets none.
  if (r.zero_byte_allocs() > 0) {
    fmt::format_to(out,
                   "              {} of them asked for 0 bytes: they take no memory and get no block, so "
                   "the allocator's num_allocs does not count them\n",
                   r.zero_byte_allocs());
  }
}

void WriteStats(Out out, const ReplayReportInput& in) {
  fmt::format_to(out, "{}", in.config->policy->texts.stats(*in.allocator));
  Counters counters;
  in.allocator->AppendCounters(counters);
  if (!counters.empty()) {
    fmt::format_to(out, "\nCounters of {}:\n", in.allocator->name());
    for (const Counter& c : counters) fmt::format_to(out, "  {:<36}{:>20}\n", c.name, StatValueText(c.value));
  }
  const auto events = in.recorder->PolicyEventCounts();
  if (!events.empty()) {
    fmt::format_to(out, "\nPolicy events:\n");
    for (const auto& [name, count] : events) fmt::format_to(out, "  {:<36}{:>20}\n", name, count);
  }
}

void WriteLowerBound(Out out, const ReplayReportInput& in) {
  const ReplaySummary& s = *in.summary;
  const int64_t peak_in_use = in.allocator->GetStats().peak_bytes_in_use;
  fmt::format_to(out, "\nPeak live bytes (the lower bound no allocator can beat): {}",
                 WithHuman(s.peak_live_bytes));
  if (s.peak_live_event) fmt::format_to(out, " at event {}", s.peak_live_event->value());
  const int64_t live = static_cast<int64_t>(s.peak_live_bytes.value());
  if (s.failures > 0) {
    // Failed requests count in the bound but never held memory: no overhead to show.
    fmt::format_to(out, "\nPeak bytes in use: {} (failed requests count in the lower bound only)\n",
                   WithHuman(peak_in_use));
    return;
  }
  fmt::format_to(out, "\nPeak bytes in use over the lower bound: {}", WithHuman(peak_in_use - live));
  if (live > 0) fmt::format_to(out, " ({:.2f}%)", 100.0 * static_cast<double>(peak_in_use - live) / live);
  fmt::format_to(out, "\n");
}

void WriteFailures(Out out, const ReplayReportInput& in) {
  const std::vector<FailureRecord>& failures = in.recorder->failures();
  if (failures.empty()) {
    fmt::format_to(out, "\nEvery allocation fit.\n");
    return;
  }
  const uint64_t count = in.recorder->failure_count();
  fmt::format_to(out, "\nFailed allocations ({}):\n", count);
  fmt::format_to(out, "  {:>10} {:>10} {:>14} {:>14}  {:<13} {:>14} {:>14}\n", "event", "id", "requested",
                 "rounded", "verdict", "free", "largest_free");
  for (size_t i = 0; i < failures.size() && i < kMaxListedFailures; ++i) {
    const FailureRecord& f = failures[i];
    fmt::format_to(out, "  {:>10} {:>10} {:>14} {:>14}  {:<13} {:>14} {:>14}", f.event.value(), f.id,
                   f.requested.value(), f.rounded.value(), AllocStatusName(f.kind), f.free_bytes.value(),
                   f.largest_free_block_bytes.value());
    if (f.event_kind != EventKind::kAlloc) fmt::format_to(out, "  ({})", EventKindName(f.event_kind));
    if (!in.recorder->labels(i).tag.empty()) fmt::format_to(out, "  tag={}", in.recorder->labels(i).tag);
    if (!in.recorder->labels(i).shape.empty()) fmt::format_to(out, "  shape={}", in.recorder->labels(i).shape);
    if (!in.recorder->mark_before(i).empty())
      fmt::format_to(out, "  after mark {}", in.recorder->mark_before(i));
    fmt::format_to(out, "\n");
  }
  if (count > kMaxListedFailures) {
    fmt::format_to(out, "  ... and {} more (see --json)\n", count - kMaxListedFailures);
  }
  const FailureRecord& first = failures.front();
  fmt::format_to(out, "\nMemory at the first failure (event {}, id {}):\n{}", first.event.value(), first.id,
                 in.recorder->first_failure_dump());
}

}  // namespace

OptionValues EffectiveOptions(const AllocatorConfig& config) {
  if (config.policy == nullptr || !config.policy->effective_options) return config.options;
  absl::StatusOr<OptionValues> ran = config.policy->effective_options(config.options);
  // A value the policy refuses never gets as far as a report: the build fails first.
  return ran.ok() ? *std::move(ran) : config.options;
}

std::string EffectiveOptionsText(const AllocatorConfig& config) {
  std::string out;
  const OptionValues ran = EffectiveOptions(config);
  for (const auto& [name, value] : ran.entries()) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", name, FormatOptionValue(value));
  }
  return out.empty() ? "(none)" : out;
}

std::string TextReport(const ReplayReportInput& in) {
  // The failing request's block names it, with its stack: the tables below need not again.
  const std::string failing = FailingRequestText(in);
  std::string text = VerdictText(in) + failing;
  if (in.attribution != nullptr) {
    text += "\n" + RenderMemoryAttributionText(*in.attribution, /*rows=*/10,
                                               /*name_failed_request=*/failing.empty());
  }
  if (in.reserved != nullptr) text += "\n" + RenderReservedText(*in.reserved, in.config->policy->name);
  if (!in.advice_text.empty()) text += "\n" + in.advice_text;
  return text + "\n" + DetailsText(in);
}

std::string DetailsText(const ReplayReportInput& in) {
  std::string text;
  Out out(text);
  WriteHeader(out, in);
  WriteStats(out, in);
  WriteLowerBound(out, in);
  WriteFailures(out, in);
  return text;
}

}  // namespace hbmsim::sim
