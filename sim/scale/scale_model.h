// The job's structure and its sizes: recordings of one job at several values
// of a size parameter, aligned with one of them (the template: the one
// nearest the size asked for, the larger on a tie, else the largest: the
// code path nearest that size) and each of the template's allocations
// fitted (sim/scale/size_fit.h) over the values it aligns at.
//
//   members    sorted by value; members[template_index] is the template
//   per alloc  the other members' allocs it aligns with, its fit, and how its
//              size at N is chosen:
//                fitted     a confirmed form, exact on every point
//                guessed    no confirmed form (unexplained): the line through
//                           its two recorded sizes nearest N (size_fit.h
//                           GuessSize), a guess the report counts
//                kept       aligned at one size only, or the guess is negative
//                           at N: the template's recorded size
//   per member what did not align: steps at one size only, frees in another
//              order, and whether the difference was too long to align
#ifndef HBMSIM_SIM_SCALE_SCALE_MODEL_H_
#define HBMSIM_SIM_SCALE_SCALE_MODEL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scale/member_stream.h"
#include "sim/scale/size_fit.h"

namespace hbmsim::sim::scale {

// A run of consecutive steps of one recording that have no counterpart.
struct UnalignedRun {
  bool in_template = false;  // false: in the other member
  uint32_t first_step = 0;
  uint32_t steps = 0;
  uint32_t allocs = 0;
};

struct MemberAlignment {
  size_t member = 0;  // index into ScaleModel::members
  size_t matched_steps = 0;
  size_t template_only_steps = 0;
  size_t other_only_steps = 0;
  size_t template_only_allocs = 0;
  size_t other_only_allocs = 0;
  size_t reordered_frees = 0;  // a matched free of another alloc than the one its alloc matched
  bool complete = true;
  bool loose = false;              // aligned without line numbers (the stacks' lines differ)
  std::vector<UnalignedRun> runs;  // in template order, then the member's
  std::vector<uint32_t> alloc_of;  // template alloc -> this member's alloc, or kNoAlloc
};

struct AllocModel {
  uint32_t aligned_members = 0;  // other members it aligns with
  std::optional<SizeFit> fit;    // nullopt: unexplained, its size at N is guessed
  // Without a fit: the sizes it was recorded at, one per member it aligns
  // with and the template's, ascending value (what GuessSize draws from).
  std::vector<SizePoint> recorded;
};

struct ScaleModel {
  std::vector<std::shared_ptr<const MemberStream>> members;  // ascending value
  size_t template_index = 0;
  std::vector<MemberAlignment> alignments;  // one per member but the template
  std::vector<AllocModel> allocs;           // one per template alloc

  // Each member's start state holds every segment (by size) of the next
  // smaller member's, and the largest holds more than the smallest: the
  // sizes ran one after another in one process, smallest first, and each
  // recording's cache is the history of the ones before it (and of its own
  // warm-up). Recordings made in separate processes cache segments of their
  // own size only.
  bool start_states_nested = false;

  const MemberStream& templ() const { return *members[template_index]; }
  std::shared_ptr<const MemberStream> templ_ptr() const { return members[template_index]; }
  uint64_t largest_value() const { return members.back()->value; }
  // Allocs aligned in every member, over the template's allocs.
  double AlignedFraction() const;
  uint64_t AlignedAllocs() const;
  uint64_t UnexplainedAllocs() const;
  // Allocs each form explains, in kSizeForms order.
  std::array<uint64_t, kSizeForms.size()> FormCounts() const;
};

// Needs two members or more with distinct values. `near`: the size the
// model is for (the template is the member nearest it); nullopt: the
// largest. Errors: InvalidArgument.
absl::StatusOr<ScaleModel> BuildScaleModel(std::vector<std::shared_ptr<const MemberStream>> members,
                                           std::optional<uint64_t> near = std::nullopt);

// The template's allocation sizes at n: fitted where a fit extends to n,
// guessed where no form explains the sizes, recorded elsewhere.
// `unextended`, if given, counts the allocs whose fit or guess did not extend
// to n (negative or too large there) and kept their size.
std::vector<uint64_t> PredictAllocSizes(const ScaleModel& model, uint64_t n, uint64_t* unextended = nullptr);

}  // namespace hbmsim::sim::scale

#endif  // HBMSIM_SIM_SCALE_SCALE_MODEL_H_
