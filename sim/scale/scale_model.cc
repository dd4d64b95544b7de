#include "sim/scale/scale_model.h"

#include <algorithm>

#include "fmt/format.h"
#include "sim/scale/stream_align.h"

namespace hbmsim::sim::scale {
namespace {

// Consecutive unmatched steps of one side, as runs.
void AddRuns(const MemberStream& m, const std::vector<bool>& matched, bool in_template,
             std::vector<UnalignedRun>& runs) {
  for (size_t i = 0; i < matched.size();) {
    if (matched[i]) {
      ++i;
      continue;
    }
    UnalignedRun run{in_template, static_cast<uint32_t>(i), 0, 0};
    while (i < matched.size() && !matched[i]) {
      ++run.steps;
      if (m.steps[i].kind == EventKind::kAlloc) ++run.allocs;
      ++i;
    }
    runs.push_back(run);
  }
}

MemberAlignment Align(const MemberStream& t, const MemberStream& o, size_t member) {
  const MemberSteps aligned = AlignMemberSteps(t, o);
  const StepAlignment& steps = aligned.steps;
  MemberAlignment out;
  out.member = member;
  out.loose = aligned.loose;
  out.complete = steps.complete;
  out.matched_steps = steps.matched;
  out.alloc_of.assign(t.allocs(), kNoAlloc);
  std::vector<bool> t_matched(t.steps.size(), false), o_matched(o.steps.size(), false);
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const uint32_t j = steps.other_of[i];
    if (j == kNoStep) continue;
    t_matched[i] = o_matched[j] = true;
    if (t.steps[i].kind == EventKind::kAlloc) out.alloc_of[t.steps[i].alloc] = o.steps[j].alloc;
  }
  for (size_t i = 0; i < t.steps.size(); ++i) {  // frees: after every alloc is matched
    const uint32_t j = steps.other_of[i];
    const StreamStep& s = t.steps[i];
    if (j == kNoStep || s.kind == EventKind::kAlloc || s.alloc == kNoAlloc) continue;
    if (out.alloc_of[s.alloc] != o.steps[j].alloc) ++out.reordered_frees;
  }
  AddRuns(t, t_matched, true, out.runs);
  AddRuns(o, o_matched, false, out.runs);
  for (const UnalignedRun& r : out.runs) {
    (r.in_template ? out.template_only_steps : out.other_only_steps) += r.steps;
    (r.in_template ? out.template_only_allocs : out.other_only_allocs) += r.allocs;
  }
  return out;
}

AllocModel FitAlloc(const ScaleModel& model, uint32_t alloc) {
  const MemberStream& t = model.templ();
  std::vector<SizePoint> points;
  AllocModel out;
  for (const MemberAlignment& a : model.alignments) {
    const uint32_t other = a.alloc_of[alloc];
    if (other == kNoAlloc) continue;
    ++out.aligned_members;
    const MemberStream& m = *model.members[a.member];
    points.push_back({m.value, m.alloc_bytes[other]});
  }
  points.push_back({t.value, t.alloc_bytes[alloc]});
  out.fit = FitSize(points);
  if (!out.fit) {
    std::sort(points.begin(), points.end(), [](const SizePoint& a, const SizePoint& b) { return a.n < b.n; });
    out.recorded = std::move(points);
  }
  return out;
}

// The member nearest `near`, the larger on a tie; the largest without one.
size_t NearestMember(const std::vector<std::shared_ptr<const MemberStream>>& members,
                     std::optional<uint64_t> near) {
  size_t best = members.size() - 1;
  if (!near) return best;
  auto distance = [&](size_t i) {
    const uint64_t v = members[i]->value;
    return v > *near ? v - *near : *near - v;
  };
  for (size_t i = members.size(); i-- > 0;) {
    if (distance(i) < distance(best)) best = i;
  }
  return best;
}

// The start state's segment sizes, ascending.
std::vector<uint64_t> SegmentSizes(const MemberStream& m) {
  std::vector<uint64_t> out;
  for (const StartSegment& s : m.scenario->start_state) out.push_back(s.size.value());
  std::sort(out.begin(), out.end());
  return out;
}

bool StartStatesNested(const std::vector<std::shared_ptr<const MemberStream>>& members) {
  std::vector<uint64_t> previous = SegmentSizes(*members.front());
  const size_t smallest = previous.size();
  for (size_t i = 1; i < members.size(); ++i) {
    std::vector<uint64_t> sizes = SegmentSizes(*members[i]);
    if (!std::includes(sizes.begin(), sizes.end(), previous.begin(), previous.end())) return false;
    previous = std::move(sizes);
  }
  return previous.size() > smallest;
}

}  // namespace

double ScaleModel::AlignedFraction() const {
  return allocs.empty() ? 1.0 : static_cast<double>(AlignedAllocs()) / static_cast<double>(allocs.size());
}

uint64_t ScaleModel::AlignedAllocs() const {
  const uint32_t others = static_cast<uint32_t>(alignments.size());
  return static_cast<uint64_t>(std::count_if(
      allocs.begin(), allocs.end(), [&](const AllocModel& a) { return a.aligned_members == others; }));
}

uint64_t ScaleModel::UnexplainedAllocs() const {
  return static_cast<uint64_t>(
      std::count_if(allocs.begin(), allocs.end(), [](const AllocModel& a) { return !a.fit.has_value(); }));
}

std::array<uint64_t, kSizeForms.size()> ScaleModel::FormCounts() const {
  std::array<uint64_t, kSizeForms.size()> out{};
  for (const AllocModel& a : allocs) {
    if (!a.fit) continue;
    for (size_t i = 0; i < kSizeForms.size(); ++i) {
      if (kSizeForms[i] == a.fit->form) ++out[i];
    }
  }
  return out;
}

absl::StatusOr<ScaleModel> BuildScaleModel(std::vector<std::shared_ptr<const MemberStream>> members,
                                           std::optional<uint64_t> near) {
  if (members.size() < 2) {
    return absl::InvalidArgumentError("--at: give at least two recordings of the job at different sizes");
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const auto& a, const auto& b) { return a->value < b->value; });
  for (size_t i = 1; i < members.size(); ++i) {
    if (members[i]->value == members[i - 1]->value) {
      return absl::InvalidArgumentError(fmt::format("--at {}: given twice ({} and {})", members[i]->value,
                                                    members[i - 1]->name, members[i]->name));
    }
  }
  ScaleModel model;
  model.members = std::move(members);
  model.template_index = NearestMember(model.members, near);
  model.start_states_nested = StartStatesNested(model.members);
  for (size_t i = 0; i < model.members.size(); ++i) {
    if (i != model.template_index) model.alignments.push_back(Align(model.templ(), *model.members[i], i));
  }
  model.allocs.reserve(model.templ().allocs());
  for (uint32_t a = 0; a < model.templ().allocs(); ++a) model.allocs.push_back(FitAlloc(model, a));
  return model;
}

std::vector<uint64_t> PredictAllocSizes(const ScaleModel& model, uint64_t n, uint64_t* unextended) {
  const MemberStream& t = model.templ();
  std::vector<uint64_t> out(t.alloc_bytes);
  for (size_t a = 0; a < model.allocs.size(); ++a) {
    const AllocModel& m = model.allocs[a];
    if (!m.fit && m.recorded.size() < 2) continue;  // seen at one size: nothing to go by
    const std::optional<uint64_t> bytes = m.fit ? PredictSize(*m.fit, n) : GuessSize(m.recorded, n);
    if (bytes) {
      out[a] = *bytes;
    } else if (unextended != nullptr) {
      ++*unextended;
    }
  }
  return out;
}

}  // namespace hbmsim::sim::scale
