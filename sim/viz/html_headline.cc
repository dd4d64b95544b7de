#include "sim/viz/html_headline.h"

#include "fmt/format.h"
#include "sim/layer.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::viz {
namespace {

std::string Human(Bytes b) { return HumanReadableNumBytes(b); }

std::string UnderWords(const ReplayReportInput& in) {
  const std::string policy =
      in.config != nullptr ? in.config->policy->name : std::string(in.allocator->name());
  if (in.bytes_limit == Bytes::Max()) return fmt::format("with {} and no memory limit", policy);
  return fmt::format("with {} under a limit of {}", policy, Human(in.bytes_limit));
}

// Why the first failure failed, in words a person whose job died uses.
std::string CauseWords(const FailureRecord& f) {
  if (f.kind == AllocStatus::kFragmentation) {
    return fmt::format(
        "{} was free in all, enough, but in pieces: the largest request that could have succeeded was {}. "
        "It is fragmentation, not a full device.",
        Human(f.free_bytes), Human(f.largest_free_block_bytes));
  }
  return fmt::format("only {} was free. The device was full: a true out-of-memory, not fragmentation.",
                     Human(f.free_bytes));
}

}  // namespace

std::string HeadlineText(const ReplayReportInput& in) {
  const ReplaySummary& s = *in.summary;
  const std::vector<FailureRecord>& failures = in.recorder->failures();
  if (failures.empty()) {
    return fmt::format("Every one of the {} allocations fit {}; the live buffers peaked at {}.", s.allocs,
                       UnderWords(in), Human(s.peak_live_bytes));
  }
  const FailureRecord& first = failures.front();
  if (s.start_state_refused) {
    return fmt::format("Nothing was replayed: the memory the recording began with ({}) does not fit {}.",
                       Human(first.requested), UnderWords(in));
  }
  return fmt::format("{} of {} allocations failed {}. The first asked for {} at event {}, when {}",
                     s.failures, s.allocs, UnderWords(in), Human(first.requested), first.event.value(),
                     CauseWords(first));
}

std::string ChangedOptionsText(const AllocatorConfig& config) {
  const OptionValues ran = EffectiveOptions(config);
  AllocatorConfig defaults = config;
  defaults.options = OptionValues::Defaults(config.policy->options);
  const OptionValues by_default = EffectiveOptions(defaults);
  std::string out;
  for (const auto& [name, value] : ran.entries()) {
    const OptionValue* d = by_default.Find(name);
    if (d != nullptr && FormatOptionValue(*d) == FormatOptionValue(value)) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, FormatOptionValue(value));
  }
  return out.empty() ? "its defaults" : out;
}

}  // namespace hbmsim::sim::viz
