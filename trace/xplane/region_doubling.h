// Region sizes an allow_growth BFC can have made (start_state.h, grown
// regions). REF's Extend (reference §1.7) starts from a current region size
// `first` (REF: 2 MiB; TF 1.x-2.1: 1 MiB) and, for a request of r bytes,
// doubles it while r is larger, takes a region of that size, and doubles it
// once more only when it did not have to before:
//
//   curr = first;  region s:  s == curr -> curr = 2·s      (a plain step)
//                             s == curr·2^k, k > 0 -> curr = s   (a jump)
//
// So the regions, smallest first, never shrink, each is the current size
// times a power of two, and a size appears twice in a row only when the
// first of the two was a jump. From 2 MiB, {2, 32, 32, 64} MiB can be made (2;
// a request over 16 MiB jumps to 32; 32; 64), {32, 32, 64, 64} cannot; only
// a first region of 1 MiB makes a pool of an odd number of MiB. The replay
// rebuilds the regions with fillers of exactly their sizes, smallest first
// (profile_trace.h), and BFC's own Extend gives them those sizes only when
// they can be made this way; otherwise every later region comes out larger
// and the replay's regions are not the recording's.
//
// LayOutByDoubling picks, among the layouts the addresses allow, one that can
// be made: placed regions are widened (fewest doublings first; never one whose
// end a chunk handed out whole records, never into the next region), and the
// untouched free regions that make up the pool are chosen to fit (one per set
// bit of what is left when that works, else the fewest). Live bytes the
// recording never touches (U's rest) get a region of their own when that can
// be made, else lie at the bottom of the smallest untouched region that holds
// them.
//
// Not modelled: garbage collection, which releases fully free regions and
// lets Extend make sizes no single doubling run does.
#ifndef HBMSIM_TRACE_XPLANE_REGION_DOUBLING_H_
#define HBMSIM_TRACE_XPLANE_REGION_DOUBLING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "trace/xplane/start_state.h"

namespace hbmsim::trace::xplane {

// Whether Extend, from a current size of `first`, makes regions of these
// sizes (in any order given; they are made smallest first).
bool MadeByDoubling(std::vector<int64_t> sizes, int64_t first);

// Untouched free regions of `rest` bytes in all that, with `taken`, make a
// pool MadeByDoubling: one per set bit of rest / first when that works, else
// the fewest; largest first. nullopt when there is none (or the bounded search
// gives up).
std::optional<std::vector<int64_t>> CompleteByDoubling(const std::vector<int64_t>& taken, int64_t rest,
                                                       int64_t first);

struct DoublingLayout {
  std::vector<int64_t> placed_sizes;    // one per region of `placed`, in its order
  std::vector<StartRegion> untouched;   // no base; U's rest as unknown_live of one of them
  int64_t doublings = 0;                // how many times placed regions were doubled
};

// Sizes for `placed` (regions with a base, in address order) and the
// untouched regions so that the pool holds `target` bytes and can be made by
// doubling from `first`, `left` live bytes the recording never touches included.
std::optional<DoublingLayout> LayOutByDoubling(const std::vector<StartRegion>& placed, int64_t left,
                                               int64_t target, int64_t first);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_REGION_DOUBLING_H_
