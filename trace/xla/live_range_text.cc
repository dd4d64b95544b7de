#include "trace/xla/live_range_text.h"

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "trace/xla/text_lines.h"

namespace hbmsim::trace::xla {
namespace {

enum class Section { kNone, kSequence, kBuffers, kPeak };

// "tuple.3{1}:4-6" -> entry. The name is everything before the last ':'.
absl::StatusOr<LiveRangeEntry> ParseEntry(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(fmt::format("expected <value>:<start>-<end>, got \"{}\"", text));
  }
  LiveRangeEntry entry;
  entry.name = std::string(text.substr(0, colon));
  std::string_view times = text.substr(colon + 1);
  std::optional<uint64_t> start = ConsumeDecimal(times);
  const bool dash = Consume(times, "-");
  std::optional<uint64_t> end = ConsumeDecimal(times);
  if (!start || !dash || !end || !times.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("expected <start>-<end> after \"{}:\", got \"{}\"", entry.name, text.substr(colon + 1)));
  }
  if (*start > *end) {
    return absl::InvalidArgumentError(
        fmt::format("{} starts at {} after its end {}", entry.name, *start, *end));
  }
  entry.start = *start;
  entry.end = *end;
  return entry;
}

absl::StatusOr<uint64_t> ParseHeader(std::string_view line) {
  std::string_view s = StripBlanks(line);
  if (!Consume(s, "HloLiveRange (max ")) {
    return absl::InvalidArgumentError(fmt::format("expected \"HloLiveRange (max N):\", got \"{}\"", line));
  }
  std::optional<uint64_t> max = ConsumeDecimal(s);
  if (!max || s != "):") {
    return absl::InvalidArgumentError(fmt::format("expected \"HloLiveRange (max N):\", got \"{}\"", line));
  }
  return *max;
}

// A section title switches the section; returns false for any other line.
// "Live ranges at T (peak):" also opens the listed peak.
bool SwitchSection(std::string_view s, Section& section, LiveRanges& ranges) {
  if (s == "InstructionSequence:") {
    section = Section::kSequence;
  } else if (s == "BufferLiveRange:") {
    section = Section::kBuffers;
  } else if (Consume(s, "Live ranges at ")) {
    section = Section::kPeak;
    std::optional<uint64_t> time = ConsumeDecimal(s);
    if (time) ranges.peak = ListedPeak{*time, {}};
  } else {
    return false;
  }
  return true;
}

// "fft.4.0: 1061683200 bytes" (or "... bytes (cumulative: N bytes)"): kept
// when it reads so; the list is XLA's summary, so an odd line is passed over.
void AddListed(std::string_view s, LiveRanges& ranges) {
  const size_t colon = s.find(": ");
  if (!ranges.peak || colon == std::string_view::npos) return;
  std::string_view rest = s.substr(colon + 2);
  std::optional<uint64_t> bytes = ConsumeDecimal(rest);
  if (bytes && rest.starts_with(" bytes"))
    ranges.peak->values.emplace_back(std::string(s.substr(0, colon)), *bytes);
}

}  // namespace

absl::StatusOr<LiveRanges> ParseLiveRangeText(std::string_view text, std::string_view source,
                                              int first_line) {
  LineCursor lines(text, first_line);
  std::optional<std::string_view> line = lines.Next();
  while (line && StripBlanks(*line).empty()) line = lines.Next();
  if (!line) return LineError(source, lines.line(), "no \"HloLiveRange (max N):\" header");
  absl::StatusOr<uint64_t> max = ParseHeader(*line);
  if (!max.ok()) return LineError(source, lines.line(), std::string(max.status().message()));
  LiveRanges ranges;
  ranges.max_time = *max;
  absl::flat_hash_map<std::string, int> first_seen;  // name -> line, for duplicates
  Section section = Section::kNone;
  while ((line = lines.Next())) {
    const std::string_view s = StripBlanks(*line);
    if (s.empty() || SwitchSection(s, section, ranges)) continue;
    if (section == Section::kNone) {
      return LineError(source, lines.line(), fmt::format("expected a section title, got \"{}\"", s));
    }
    if (section == Section::kPeak) AddListed(s, ranges);
    if (section != Section::kBuffers) continue;  // the schedule is not needed
    absl::StatusOr<LiveRangeEntry> entry = ParseEntry(s);
    if (!entry.ok()) return LineError(source, lines.line(), std::string(entry.status().message()));
    if (entry->end > ranges.max_time) {
      return LineError(source, lines.line(),
                       fmt::format("{} ends at {}, after the schedule's max {}", entry->name, entry->end,
                                   ranges.max_time));
    }
    entry->line = lines.line();
    auto [it, inserted] = first_seen.emplace(entry->name, entry->line);
    if (!inserted) {
      return LineError(source, lines.line(),
                       fmt::format("{} has a second live range (first at line {})", entry->name, it->second));
    }
    ranges.entries.push_back(std::move(*entry));
  }
  return ranges;
}

}  // namespace hbmsim::trace::xla
