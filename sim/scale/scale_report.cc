#include "sim/scale/scale_report.h"

#include <algorithm>
#include <iterator>
#include <map>

#include "fmt/format.h"
#include "sim/layer.h"
#include "sim/report/replay_report.h"
#include "sim/report/user_frames.h"
#include "sim/scale/stream_align.h"
#include "trace/core/human_bytes.h"

namespace hbmsim::sim::scale {
namespace {

using Json = nlohmann::ordered_json;

// Rows of the by-frame table at the peak, and of the unexplained calls.
constexpr size_t kFrameRows = 8;
constexpr size_t kUnexplainedRows = 5;

std::string Sized(Bytes b) { return fmt::format("{} ({})", b.value(), HumanReadableNumBytes(b)); }

std::string FrameOf(const MemberStream& m, uint32_t step) {
  const std::string frame =
      TopUserFrame(m.scenario->recording->facts().context_table.get(), m.contexts[step].frames);
  return frame.empty() ? std::string(EventKindName(m.events[step].event.kind)) : frame;
}

std::string RunsText(const ScaleModel& model, const MemberAlignment& a, bool in_template) {
  const MemberStream& m = in_template ? model.templ() : *model.members[a.member];
  const size_t steps = in_template ? a.template_only_steps : a.other_only_steps;
  const size_t allocs = in_template ? a.template_only_allocs : a.other_only_allocs;
  if (steps == 0) return "";
  for (const UnalignedRun& r : a.runs) {
    if (r.in_template != in_template) continue;
    const std::string what = allocs == 0
                                 ? fmt::format("{} event{} (no allocation)", steps, steps == 1 ? "" : "s")
                                 : fmt::format("{} allocations ({} events)", allocs, steps);
    return fmt::format("{} at {} only, the first at event {} from {}", what, m.value, r.first_step,
                       FrameOf(m, r.first_step));
  }
  return "";
}

std::string WithPercent(double share) { return fmt::format("{:.2f}%", 100 * share); }

std::string FormsText(const ScaleModel& model) {
  std::string out;
  const auto counts = model.FormCounts();
  for (size_t i = 0; i < kSizeForms.size(); ++i) {
    if (counts[i] == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", SizeFormName(kSizeForms[i]), counts[i]);
  }
  out += fmt::format("{}unexplained {}", out.empty() ? "" : ", ", model.UnexplainedAllocs());
  return out;
}

std::string FailureText(const Prediction& p) {
  if (!p.run.first_failure) return "fits";
  const ScaleFailure& f = *p.run.first_failure;
  return fmt::format("{} at event {} of the prediction (a request of {}{}{})", p.run.Verdict(), f.event,
                     Sized(f.requested), f.frame.empty() ? "" : " from ", f.frame);
}

void PeakFramesText(const Prediction& p, std::string& out) {
  if (!p.run.at_peak || p.run.at_peak->by_frame.empty()) return;
  out += fmt::format("  at the peak, by frame (requested bytes held, {} buffers):\n",
                     p.run.at_peak->held_buffers);
  size_t shown = 0;
  for (const MemoryGroup& g : p.run.at_peak->by_frame) {
    if (shown++ == kFrameRows) break;
    out += fmt::format("    {:>6.2f}%  {:>22}  {}\n", 100 * g.share, Sized(Bytes(g.bytes)), g.key);
  }
}

void PredictionText(const ScaleReport& r, std::string& out) {
  const Prediction& p = *r.prediction;
  const double factor = ExtrapolationFactor(*r.model, p.to);
  out += fmt::format("  to:               {} ({:.2f}x the largest recording, {})\n", p.to, factor,
                     r.model->largest_value());
  if (factor > kFarExtrapolation) {
    out += fmt::format(
        "  WARNING: {} is {:.1f}x the largest recorded size: far beyond what was run; a size the "
        "recordings did not see may take another code path (--check shows how far to trust it)\n",
        p.to, factor);
  }
  if (p.unextended > 0) {
    out += fmt::format(
        "  not extended:     {} fitted or guessed allocations give no size at {}; kept as recorded\n",
        p.unextended, p.to);
  }
  const PredictedScenario& ps = p.predicted;
  if (ps.start_state_kept) {
    out += "  start state:      as recorded (its blocks keep their sizes)\n";
  } else if (ps.cache_carried) {
    out += fmt::format(
        "  start state:      the template's segments carried over (the recordings' caches are nested: the "
        "sizes ran in one process, smallest first); {} of its {} blocks change size and are placed through "
        "the policy\n",
        ps.start_blocks_resized, ps.start_blocks);
  } else {
    out += fmt::format(
        "  start state:      {} of its {} blocks change size: all placed through the policy (the "
        "template's cache was of its own size)\n",
        ps.start_blocks_resized, ps.start_blocks);
  }
  out += fmt::format("  limit:            {} ({})\n", Sized(p.limit.limit), p.limit.source);
  out += fmt::format("  allocations:      {}\n", p.run.allocations);
  out += fmt::format("  peak allocated:   {}\n", Sized(p.run.peak_allocated));
  out += fmt::format("  peak reserved:    {}\n", Sized(p.run.peak_reserved));
  out += fmt::format("  verdict:          {}\n", FailureText(p));
  PeakFramesText(p, out);
}

void FitLimitText(const ScaleReport& r, std::string& out) {
  const FitLimitResult& f = *r.fit_limit;
  out += fmt::format("fit-limit {} (values: multiples of {}; {} predictions replayed)\n", Sized(f.limit),
                     f.step, f.probes.size());
  if (f.largest_fitting) {
    const Prediction& p = *f.largest_fitting;
    out += fmt::format("  largest fitting:  {} (peak reserved {}, peak allocated {})\n", p.to,
                       Sized(p.run.peak_reserved), Sized(p.run.peak_allocated));
  } else {
    out += fmt::format("  largest fitting:  none: not even {} fits\n", f.step);
  }
  if (f.first_failing) {
    const Prediction& p = *f.first_failing;
    out += fmt::format("  first failing:    {}: {} (peak reserved {})\n", p.to, FailureText(p),
                       Sized(p.run.peak_reserved));
  } else {
    out += fmt::format("  first failing:    none up to {}\n", kMaxSearchedValue);
  }
  if (f.fits_above) {
    out += fmt::format(
        "  WARNING: not monotonic: {} fails but the larger {} fits; the allocator is not monotonic in the "
        "job's size, so a size above the answer may still fit, and one below it was not all tried\n",
        f.first_failing->to, *f.fits_above);
  } else if (f.first_failing) {
    out += "  monotonic:        no larger value that was tried fits\n";
  }
}

void CheckText(const ScaleReport& r, std::string& out) {
  out += "check: each recording predicted from the others (leave one out)\n";
  out += fmt::format("  {:>8} {:>13} {:>20} {:>16} {:>16}  {}\n", "value", "allocations", "exact sizes",
                     "peak allocated", "peak reserved", "recording");
  for (const CheckRow& c : *r.check) {
    const std::string allocs = c.predicted_allocations == c.real_allocations
                                   ? fmt::format("{}", c.real_allocations)
                                   : fmt::format("{}/{}", c.predicted_allocations, c.real_allocations);
    out += fmt::format("  {:>8} {:>13} {:>20} {:>+15.3f}% {:>+15.3f}%  {}\n", c.value, allocs,
                       fmt::format("{}/{} ({:.2f}%)", c.exact, c.compared, 100 * c.ExactShare()),
                       100 * c.AllocatedError(), 100 * c.ReservedError(), c.name);
    if (c.exact < c.compared) {
      out += fmt::format("           {} sizes differ (by up to {}), {} of them from {}\n",
                         c.compared - c.exact, Sized(Bytes(c.largest_error_bytes)), c.wrong_frame_allocations,
                         c.wrong_frame.empty() ? "frames outside the user's code" : c.wrong_frame);
    }
    if (!c.real_start_reserved.is_zero() && c.real_start_reserved >= c.real_peak_reserved &&
        c.predicted_peak_reserved < c.real_peak_reserved) {
      out += fmt::format(
          "           its reserved peak is its start state's {}: segments cached before the trace "
          "began, which the trace never needs\n",
          Sized(c.real_start_reserved));
    }
    if (c.real_only_allocations > 0 || c.predicted_only_allocations > 0) {
      out += fmt::format(
          "           {} allocations of the recording have no counterpart in the prediction, "
          "{} of the prediction none in the recording: another code path at this size\n",
          c.real_only_allocations, c.predicted_only_allocations);
    }
    if (c.predicted_allocations != c.real_allocations && c.real_iterations > 1 &&
        c.real_iterations == c.predicted_iterations) {
      out += fmt::format(
          "           the same {} iterations on both sides: {} allocations each predicted, {} recorded\n",
          c.real_iterations, c.predicted_allocations / c.predicted_iterations,
          c.real_allocations / c.real_iterations);
    }
  }
}

}  // namespace

double ExtrapolationFactor(const ScaleModel& model, uint64_t to) {
  const uint64_t largest = model.largest_value();
  return largest == 0 ? 0 : static_cast<double>(to) / static_cast<double>(largest);
}

std::vector<UnexplainedGroup> UnexplainedGroups(const ScaleModel& model) {
  const MemberStream& t = model.templ();
  std::map<std::string, UnexplainedGroup> by_frame;  // ordered: ties resolve by frame
  for (uint32_t a = 0; a < model.allocs.size(); ++a) {
    if (model.allocs[a].fit) continue;
    const uint32_t step = t.alloc_steps[a];
    const std::string frame =
        a < t.start_allocs
            ? "the start state"
            : CallFrame(t.scenario->recording->facts().context_table.get(), t.contexts[step].frames);
    UnexplainedGroup& g = by_frame[frame];
    g.frame = frame;
    if (g.allocations++ > 0) continue;
    for (const MemberAlignment& al : model.alignments) {
      if (al.alloc_of[a] == kNoAlloc) continue;
      const MemberStream& m = *model.members[al.member];
      g.sizes.emplace_back(m.value, m.alloc_bytes[al.alloc_of[a]]);
    }
    g.sizes.emplace_back(t.value, t.alloc_bytes[a]);
    std::sort(g.sizes.begin(), g.sizes.end());
  }
  std::vector<UnexplainedGroup> out;
  for (auto& [frame, g] : by_frame) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.allocations > y.allocations; });
  return out;
}

std::vector<std::string> AlignmentNotes(const ScaleModel& model) {
  std::vector<std::string> out;
  for (const MemberAlignment& a : model.alignments) {
    const MemberStream& m = *model.members[a.member];
    std::vector<std::string> parts;
    if (!a.complete)
      parts.push_back(fmt::format("differs by more than {} events: the middle is not aligned", kMaxEdits));
    if (std::string t = RunsText(model, a, false); !t.empty()) parts.push_back(std::move(t));
    if (std::string t = RunsText(model, a, true); !t.empty()) parts.push_back(std::move(t));
    if (a.loose)
      parts.push_back("aligned without line numbers: the stacks' lines differ (the script changed)");
    if (a.reordered_frees > 0) parts.push_back(fmt::format("{} frees in another order", a.reordered_frees));
    if (parts.empty()) continue;
    std::string line =
        fmt::format("{} ({}) against {} ({}): ", m.name, m.value, model.templ().name, model.templ().value);
    for (size_t i = 0; i < parts.size(); ++i) line += (i ? "; " : "") + parts[i];
    out.push_back(std::move(line));
  }
  return out;
}

std::string ScaleText(const ScaleReport& r) {
  const ScaleModel& m = *r.model;
  std::string out = "hbmsim scale\n";
  for (const auto& member : m.members) {
    out += fmt::format("  recording:        {} = {} ({} allocations, {} at the start)\n", member->value,
                       member->name, member->allocs() - member->start_allocs, member->start_allocs);
  }
  out += fmt::format(
      "  template:         {} (the nearest the size asked for: its calls, in its order, each size "
      "predicted)\n",
      m.templ().name);
  out += fmt::format("  aligned:          {} of {} allocations ({}) at every size\n", m.AlignedAllocs(),
                     m.allocs.size(), WithPercent(m.AlignedFraction()));
  for (const std::string& note : AlignmentNotes(m)) out += fmt::format("  not aligned:      {}\n", note);
  out += fmt::format("  size fits:        {}\n", FormsText(m));
  if (m.UnexplainedAllocs() > 0) {
    out +=
        "                    (an unexplained allocation is guessed: the line through its two recorded sizes "
        "nearest the size asked for)\n";
    size_t shown = 0;
    for (const UnexplainedGroup& g : UnexplainedGroups(m)) {
      if (shown++ == kUnexplainedRows) break;
      std::string sizes;
      for (const auto& [value, bytes] : g.sizes)
        sizes += fmt::format("{}{} at {}", sizes.empty() ? "" : ", ", bytes, value);
      out += fmt::format("  unexplained:      {} from {} (the first: {})\n", g.allocations,
                         g.frame.empty() ? "a call with no frame" : g.frame, sizes);
    }
  }
  out +=
      fmt::format("  allocator:        {} ({})\n", r.config->policy->name, EffectiveOptionsText(*r.config));
  if (r.prediction != nullptr) PredictionText(r, out);
  if (r.fit_limit != nullptr) FitLimitText(r, out);
  if (r.check != nullptr) CheckText(r, out);
  if (!r.out.empty()) {
    out += fmt::format("  written:          {} ({})\n", r.out,
                       r.out_is_snapshot ? "the predicted run, a PyTorch snapshot" : "the predicted trace");
  }
  return out;
}

}  // namespace hbmsim::sim::scale
