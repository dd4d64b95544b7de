// The start state of a BFC that grew its pool on demand (allow_growth), as
// InferStartState lays it out (start_state.h): the pool the fragmentation
// readings imply, and one region per cluster of the addresses the recording
// touches, tiled with its known chunks, the live bytes it cannot place
// (unknown_bytes) and free space.
#ifndef HBMSIM_TRACE_XPLANE_GROWN_LAYOUT_H_
#define HBMSIM_TRACE_XPLANE_GROWN_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "trace/xplane/profile.h"
#include "trace/xplane/start_state.h"

namespace hbmsim::trace::xplane {

// Device addresses [begin, end).
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// The pool P the fragmentation readings agree on (at least 3 pairs), or nullopt.
std::optional<int64_t> EstimatePool(const AllocatorRecording& rec, const StartState& s);

// Replaces s.chunks (the known ones) with the regions and chunks of a grown
// pool: `touched` are the address ranges the recording touches, in order;
// `unsplit_ends` the ends of chunks never split, after which the region's
// tail may be live. Needs s.pool_estimate.
void LayOutGrown(const AllocatorRecording& rec, const std::vector<Range>& touched,
                 const std::vector<uint64_t>& unsplit_ends, StartState& s);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_GROWN_LAYOUT_H_
