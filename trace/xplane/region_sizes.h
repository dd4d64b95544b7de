// The sizes of the regions an allow_growth pool grew, chosen so that the
// fragmentation readings come out as recorded (start_state.h, grown regions).
//
// Addresses say where a region starts and how much of it the recording
// touches, not how large it is: a region of 512 MiB whose only recorded
// chunk is 76 MiB looks like one of 128 MiB. Every record's fragmentation
// reading, f = (free pool − largest free chunk) / free pool, says how large
// the largest free chunk was, and BFC keeps free neighbours merged inside a
// region, so a layout of regions predicts every reading:
//
//   largest free chunk after record i = max( the widest free run inside each
//       placed region, between the chunks live then; each untouched region )
//   free pool = P − bytes in use            (P from the readings: start_state.h)
//
// Each placed region starts as the smallest 2 MiB·2^k that spans its chunks;
// in address order, each is doubled while it stays clear of the next region
// and the placed sizes stay within P, keeping the size that reproduces the
// most readings (the smallest on a tie). What P leaves over is untouched
// regions, one per set bit of (P − placed) / 2 MiB, as before.
//
// Not knowable this way: a region's size when no reading depends on it (it
// never held the largest free chunk), and where untouched regions lie.
#ifndef HBMSIM_TRACE_XPLANE_REGION_SIZES_H_
#define HBMSIM_TRACE_XPLANE_REGION_SIZES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/xplane/profile.h"
#include "trace/xplane/start_state.h"

namespace hbmsim::trace::xplane {

// BFC's first region under allow_growth: 2 MiB (REF), doubling from there;
// 1 MiB in TF 1.x-2.1 and in the builds some shared TF profiles come from.
inline constexpr int64_t kFirstRegion = int64_t{2} << 20;
inline constexpr int64_t kOldFirstRegion = int64_t{1} << 20;

// The search replays the readings once per candidate size: beyond these
// (a hostile or unusual file) the smallest spanning sizes are kept.
inline constexpr size_t kMaxRecordsForRegionSearch = 5000;
inline constexpr size_t kMaxRegionsForSearch = 16;

// How many records' fragmentation readings the layout reproduces.
int64_t ReadingsReproduced(const AllocatorRecording& rec, const StartState& s,
                           const std::vector<StartChunk>& live_before, const std::vector<StartRegion>& placed,
                           int64_t pool);

// Widens `regions` (those with a base, in address order) as above. `live_before`:
// the chunks live when the recording began (known and inferred), by address.
void WidenRegionsToReadings(const AllocatorRecording& rec, const StartState& s,
                            const std::vector<StartChunk>& live_before, int64_t pool,
                            std::vector<StartRegion>& regions);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_REGION_SIZES_H_
