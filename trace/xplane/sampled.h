// A sampled memory profile made whole enough to replay.
//
// XProf's converter keeps at most max_num_snapshots (1000) records per
// allocator: it cuts the time-ordered list into 1000 consecutive boxes and
// keeps, from each, the record with the most heap + stack bytes (xprof's
// SampleMemoryProfileTimeline; a 2022 profile holds that sample as its
// memoryProfileSnapshots). The events between two kept records are lost, and
// what is left contradicts itself as a trace. Each kept record still carries
// the allocator's figures after its event (heap allocated = bytes in use), so
// the gap before every record is reconciled from them, in this order:
//
//   address allocated again          its free is missing: a free of the chunk
//   while live                       at that address (Missing::kFree)
//   free of an address the           its allocation is missing: an allocation
//   recording allocated and freed,   at that address (Missing::kAllocation),
//   or whose chunk would overlap     sized as below
//   a chunk allocated earlier
//   free of an address never seen,   live before the recording began
//   overlapping nothing earlier      (start_state.h: a known live chunk)
//   the size of a free that          recorded, else the live chunk there, else
//   records none (TPU)               the last chunk seen at that address, else
//                                    the drop of heap allocated across the gap
//                                    net of the events above, else the
//                                    smallest chunk the recording allocates
//   (a lost allocation is put in the gap right before its free: when it
//   happened is not recorded)
//   heap allocated fell more than    first the live chunks whose free is lost
//   the events above explain         (their address is allocated again later):
//                                    freed now, the largest that fits first
//   what heap allocated still        events of unknown address: one record of
//   moved by, d = recorded −         |d| bytes (Missing::kBytes), an allocation
//   (previous + the events above)    when d > 0, a free when d < 0
//
// Known: how many of each were needed and where (before which record). Not
// knowable: how many events a gap really held (two lost events that cancel
// leave no trace in the figures), the addresses of the kBytes events, and the
// order of events inside a gap. A complete recording (every event kept, the
// figures chaining exactly) gets nothing inserted.
#ifndef HBMSIM_TRACE_XPLANE_SAMPLED_H_
#define HBMSIM_TRACE_XPLANE_SAMPLED_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/xplane/profile.h"

namespace hbmsim::trace::xplane {

// One gap with events missing: before the recorded record `before` (its
// index among the recorded records, in time order).
struct MissingGap {
  size_t before = 0;
  std::string where;  // that record's place in the file
  int64_t frees = 0;
  int64_t allocations = 0;
  int64_t unexplained_bytes = 0;  // d above: + allocated, − freed at unknown addresses
};

struct MissingEvents {
  int64_t recorded = 0;          // records in the file
  int64_t frees = 0;             // Missing::kFree inserted
  int64_t allocations = 0;       // Missing::kAllocation inserted
  int64_t unexplained = 0;       // gaps with d != 0 (Missing::kBytes inserted)
  int64_t bytes_in = 0;          // Σ d > 0
  int64_t bytes_out = 0;         // Σ −d, d < 0
  std::vector<MissingGap> gaps;  // every gap with something missing, in order

  bool any() const { return !gaps.empty(); }
  // "sampled: 451 of 1000 records ... missing: 103 frees, 287 allocations,
  // 408 gaps ... first before <where>, <where>, <where>"
  std::string Note() const;
};

// Inserts the missing records into `rec` (each carries `missing`, its
// address and size, no figures; `where` says which record it precedes) and
// says what was missing. Records are in time order on entry and stay so.
MissingEvents ReconcileSampled(AllocatorRecording& rec);

}  // namespace hbmsim::trace::xplane

#endif  // HBMSIM_TRACE_XPLANE_SAMPLED_H_
