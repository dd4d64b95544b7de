#include "sim/scale/scale_check.h"

#include <algorithm>
#include <map>

#include "fmt/format.h"
#include "sim/report/user_frames.h"
#include "sim/scale/stream_align.h"

namespace hbmsim::sim::scale {
namespace {

double RelativeError(Bytes predicted, Bytes real) {
  if (real.is_zero()) return 0;
  return (static_cast<double>(predicted.value()) - static_cast<double>(real.value())) /
         static_cast<double>(real.value());
}

// The frame most of the wrong sizes come from (the first in name order on a tie).
void NameWorstFrame(const std::map<std::string, uint64_t>& wrong_by_frame, CheckRow& row) {
  for (const auto& [frame, count] : wrong_by_frame) {
    if (count > row.wrong_frame_allocations) {
      row.wrong_frame = frame;
      row.wrong_frame_allocations = count;
    }
  }
}

// The prediction's allocs (the template's, at the member's value) against
// the member's own: the calls of the trace, not the start state's blocks.
void CompareSizes(const MemberStream& templ, const std::vector<uint64_t>& predicted, const MemberStream& real,
                  CheckRow& row) {
  const StepAlignment a = AlignMemberSteps(templ, real).steps;
  std::vector<bool> real_matched(real.allocs(), false);
  std::map<std::string, uint64_t> wrong_by_frame;  // ordered: the report never depends on hashing
  for (size_t i = templ.start_steps; i < templ.steps.size(); ++i) {
    const StreamStep& s = templ.steps[i];
    if (s.kind != EventKind::kAlloc) continue;
    if (a.other_of[i] == kNoStep) {
      ++row.predicted_only_allocations;
      continue;
    }
    const uint32_t other = real.steps[a.other_of[i]].alloc;
    real_matched[other] = true;
    ++row.compared;
    const uint64_t p = predicted[s.alloc], r = real.alloc_bytes[other];
    if (p == r) {
      ++row.exact;
      continue;
    }
    row.largest_error_bytes = std::max(row.largest_error_bytes, p > r ? p - r : r - p);
    ++wrong_by_frame[CallFrame(real.scenario->recording->facts().context_table.get(),
                               real.contexts[a.other_of[i]].frames)];
  }
  row.real_only_allocations = static_cast<uint64_t>(std::count(
      real_matched.begin() + static_cast<ptrdiff_t>(real.start_allocs), real_matched.end(), false));
  NameWorstFrame(wrong_by_frame, row);
}

absl::StatusOr<CheckRow> CheckOne(const ScaleModel& model, size_t left_out, const AllocatorConfig& config,
                                  std::string_view limit_flag) {
  std::vector<std::shared_ptr<const MemberStream>> others;
  for (size_t i = 0; i < model.members.size(); ++i) {
    if (i != left_out) others.push_back(model.members[i]);
  }
  const MemberStream& real = *model.members[left_out];
  absl::StatusOr<ScaleModel> sub = BuildScaleModel(std::move(others), real.value);
  if (!sub.ok()) return sub.status();
  absl::StatusOr<Prediction> p = PredictAt(*sub, config, limit_flag, real.value, ScaleRunOptions{});
  if (!p.ok()) return p.status();
  absl::StatusOr<ScaleRunResult> replayed = ReplayMember(real, config, limit_flag);
  if (!replayed.ok()) return replayed.status();
  CheckRow row;
  row.value = real.value;
  row.name = real.name;
  row.predicted_allocations = sub->templ().allocs() - sub->templ().start_allocs;
  row.real_allocations = real.allocs() - real.start_allocs;
  row.predicted_iterations = sub->templ().iterations;
  row.real_iterations = real.iterations;
  CompareSizes(sub->templ(), p->alloc_bytes, real, row);
  row.predicted_peak_allocated = p->run.peak_allocated;
  row.real_peak_allocated = replayed->peak_allocated;
  row.predicted_peak_reserved = p->run.peak_reserved;
  row.real_peak_reserved = replayed->peak_reserved;
  if (real.scenario->start_summary) row.real_start_reserved = real.scenario->start_summary->reserved;
  return row;
}

}  // namespace

double CheckRow::ExactShare() const {
  return compared == 0 ? 1.0 : static_cast<double>(exact) / static_cast<double>(compared);
}
double CheckRow::AllocatedError() const {
  return RelativeError(predicted_peak_allocated, real_peak_allocated);
}
double CheckRow::ReservedError() const { return RelativeError(predicted_peak_reserved, real_peak_reserved); }

absl::StatusOr<std::vector<CheckRow>> CheckLeaveOneOut(const ScaleModel& model, const AllocatorConfig& config,
                                                       std::string_view limit_flag) {
  if (model.members.size() < 3) {
    return absl::InvalidArgumentError(fmt::format(
        "--check: predicts each recording from the others, so it needs three recordings or more ({} given)",
        model.members.size()));
  }
  std::vector<CheckRow> rows;
  for (size_t i = 0; i < model.members.size(); ++i) {
    absl::StatusOr<CheckRow> row = CheckOne(model, i, config, limit_flag);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  return rows;
}

}  // namespace hbmsim::sim::scale
