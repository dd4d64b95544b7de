// Which step of one recording is which step of another: the shortest edit
// script between their token sequences (Myers' O((N+M)·D) difference, after
// the common prefix and suffix are taken off), so a call made at one size
// only, or a run of calls that took another path, leaves the rest aligned.
//
//   template  A B C D E F          the steps a prediction is made of
//   other     A B X C D F          X: at the other size only
//   match     0 1 3 4 - 5          E: at the template's size only
//
// When the two differ by more than kMaxEdits steps the middle is left
// unaligned (complete = false) rather than spend quadratic memory on it.
#ifndef HBMSIM_SIM_SCALE_STREAM_ALIGN_H_
#define HBMSIM_SIM_SCALE_STREAM_ALIGN_H_

#include <cstdint>
#include <span>
#include <vector>

namespace hbmsim::sim::scale {

inline constexpr uint32_t kNoStep = UINT32_MAX;
inline constexpr size_t kMaxEdits = 4000;

struct StepAlignment {
  std::vector<uint32_t> other_of;  // per template step: the other's step, or kNoStep
  size_t matched = 0;
  bool complete = true;  // false: the sequences differ by more than kMaxEdits steps
};

StepAlignment AlignSteps(std::span<const uint64_t> template_tokens, std::span<const uint64_t> other_tokens);

// Two recordings' steps (sim/scale/member_stream.h) aligned: the start state
// by size (its blocks come in address order, and addresses differ between
// sizes: each template block takes the first unmatched block of the same
// call and size, then of the same call), the trace by its strict tokens, or
// by the loose ones (no line numbers) when those match more: a script edited
// between the recordings moves every line below the edit.
struct MemberSteps {
  StepAlignment steps;
  bool loose = false;
};
struct MemberStream;
MemberSteps AlignMemberSteps(const MemberStream& templ, const MemberStream& other);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_STREAM_ALIGN_H_
