#include "sim/report/verdict.h"

#include <iterator>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/user_frames.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim {
namespace {

using Out = std::back_insert_iterator<std::string>;

std::string Sized(Bytes b) { return fmt::format("{} B ({})", b.value(), HumanReadableNumBytes(b)); }

std::string LimitWords(const ReplayReportInput& in) {
  if (in.bytes_limit == Bytes::Max()) return fmt::format("no limit ({})", in.limit_source);
  return fmt::format("the limit {} (from {})", Sized(in.bytes_limit), in.limit_source);
}

std::string DeviceWords(const ReplaySummary& s) {
  return s.device ? fmt::format("on device {} ", s.device->value()) : std::string();
}

// "event 421", "program_load of program 3 at event 9".
std::string WhereWords(const FailureRecord& f) {
  if (f.event_kind == EventKind::kAlloc) return fmt::format("event {}", f.event.value());
  return fmt::format("the {} of program {} at event {}", EventKindName(f.event_kind), f.id, f.event.value());
}

// Why the first failure failed, and the bytes it lacked.
void WriteCause(Out out, const FailureRecord& f) {
  if (f.kind == AllocStatus::kFragmentation) {
    fmt::format_to(out,
                   "It is fragmentation: {} was free, enough for the {} it needed, but the largest free block\n"
                   "was {}, {} short.\n",
                   Sized(f.free_bytes), Sized(f.rounded), Sized(f.largest_free_block_bytes),
                   Sized(f.rounded.SaturatingSub(f.largest_free_block_bytes)));
    return;
  }
  fmt::format_to(out, "It is oom: it needed {} and only {} was free in all, {} short.\n", Sized(f.rounded),
                 Sized(f.free_bytes), Sized(f.rounded.SaturatingSub(f.free_bytes)));
}

}  // namespace

std::string VerdictText(const ReplayReportInput& in) {
  std::string text;
  Out out(text);
  const ReplaySummary& s = *in.summary;
  const std::string policy = in.config->policy->name;
  const std::vector<FailureRecord>& failures = in.recorder->failures();
  if (failures.empty()) {
    fmt::format_to(out, "Verdict: every one of the {} allocations fit {}with {} under {}.\n", s.allocs,
                   DeviceWords(s), policy, LimitWords(in));
    fmt::format_to(out, "Peak live bytes: {}.\n", Sized(s.peak_live_bytes));
    return text + in.start_answers_text;
  }
  const FailureRecord& first = failures.front();
  if (s.start_state_refused) {
    fmt::format_to(out,
                   "Verdict: the recording's start state ({} reserved) does not fit {}with {} under {}:\n"
                   "nothing was replayed.\n",
                   Sized(first.requested), DeviceWords(s), policy, LimitWords(in));
    return text + in.start_answers_text;
  }
  fmt::format_to(out, "Verdict: {} of {} allocations failed {}with {} under {}\n", s.failures, s.allocs,
                 DeviceWords(s), policy, LimitWords(in));
  fmt::format_to(out, "({} oom, {} fragmentation). The first failed at {}",
                 in.recorder->oom_failures(), in.recorder->fragmentation_failures(), WhereWords(first));
  const std::string& mark = in.recorder->program_mark_before_first();
  if (!mark.empty()) fmt::format_to(out, ", after mark {}", mark);
  fmt::format_to(out, ", asking for {}.\n", Sized(first.requested));
  WriteCause(out, first);
  return text + in.start_answers_text;
}

std::string FailingRequestText(const ReplayReportInput& in) {
  const std::vector<FailureRecord>& failures = in.recorder->failures();
  if (failures.empty() || in.summary->start_state_refused) return "";
  std::string text;
  Out out(text);
  const FailureRecord& f = failures.front();
  const FailureLabels& labels = in.recorder->labels(0);
  fmt::format_to(out, "\nFailing request: id {} at {}, {} requested", f.id, WhereWords(f), Sized(f.requested));
  if (f.rounded != f.requested) fmt::format_to(out, " ({} after rounding)", Sized(f.rounded));
  fmt::format_to(out, "\n  tag:    {}\n", labels.tag.empty() ? "(none)" : labels.tag);
  if (!labels.shape.empty()) fmt::format_to(out, "  shape:  {}\n", labels.shape);
  const std::vector<StackFrame>& frames = in.recorder->first_failure_frames();
  if (frames.empty()) return text;
  const std::vector<StackFrame> user = UserFrames(frames);
  if (user.empty()) {
    fmt::format_to(out, "  stack:  {} recorded frames, none in the user's Python code\n", frames.size());
    return text;
  }
  fmt::format_to(out, "  stack:  {} user frames of {} recorded (innermost first):\n", user.size(), frames.size());
  for (size_t i = 0; i < user.size() && i < kMaxListedFrames; ++i) {
    fmt::format_to(out, "    {}\n", FrameText(user[i]));
  }
  if (user.size() > kMaxListedFrames) fmt::format_to(out, "    ... and {} more\n", user.size() - kMaxListedFrames);
  return text;
}

}  // namespace hbmsim::sim
