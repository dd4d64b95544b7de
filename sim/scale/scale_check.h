// `scale --check`: how far to trust a prediction, measured on what was run.
// Each given recording is predicted from the others (leave one out; needs
// three recordings or more) and compared with its own replay:
//
//   allocations  the prediction's count and the recording's
//   sizes        the prediction's allocs aligned with the recording's
//                (sim/scale/stream_align.h; the trace's, not the start
//                state's blocks): how many got exactly the recorded
//                requested size, the largest error, the frame most wrong
//                sizes come from
//   peaks        peak allocated and peak reserved, predicted vs replayed
#ifndef HBMSIM_SIM_SCALE_SCALE_CHECK_H_
#define HBMSIM_SIM_SCALE_SCALE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scale/scale_predict.h"

namespace hbmsim::sim::scale {

struct CheckRow {
  uint64_t value = 0;
  std::string name;
  uint64_t predicted_allocations = 0;
  uint64_t real_allocations = 0;
  uint64_t compared = 0;  // allocs of the prediction aligned with the recording's
  uint64_t exact = 0;     // of them, exactly the recorded size
  uint64_t largest_error_bytes = 0;
  // The top user frame most of the wrong sizes come from, and how many.
  std::string wrong_frame;
  uint64_t wrong_frame_allocations = 0;
  uint64_t real_only_allocations = 0;       // the recording's allocs the prediction has no counterpart for
  uint64_t predicted_only_allocations = 0;  // and the other way round
  // The repeats each trace is made of (MemberStream::iterations): with the
  // same count on both sides, a count difference is per iteration, not a
  // different number of steps recorded.
  uint64_t predicted_iterations = 1;
  uint64_t real_iterations = 1;
  Bytes predicted_peak_allocated, real_peak_allocated;
  Bytes predicted_peak_reserved, real_peak_reserved;
  // What the recording's start state reserves (segments cached before its
  // trace began): when that is its peak, the reserved error is about what
  // ran before the trace, which no prediction from the trace can see.
  Bytes real_start_reserved;

  double ExactShare() const;  // exact / compared (1 when nothing was compared)
  // (predicted - real) / real, signed; 0 when real is 0.
  double AllocatedError() const;
  double ReservedError() const;
};

// Errors: InvalidArgument when fewer than three recordings are given.
absl::StatusOr<std::vector<CheckRow>> CheckLeaveOneOut(const ScaleModel& model, const AllocatorConfig& config,
                                                       std::string_view limit_flag);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SCALE_CHECK_H_
