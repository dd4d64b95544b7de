// Totals over a snapshot's final segments and counts of its trace entries:
// the numbers `python -m torch.cuda._memory_viz stats` and MemoryViz show, and
// the ground truth listed with each real snapshot the tests read.
#ifndef HBMSIM_TRACE_TORCH_SNAPSHOT_SUMMARY_H_
#define HBMSIM_TRACE_TORCH_SNAPSHOT_SUMMARY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/units.h"
#include "trace/layer.h"
#include "trace/torch/snapshot.h"

namespace hbmsim::trace {

struct SegmentTotals {
  uint64_t segments = 0;
  uint64_t small_segments = 0;
  uint64_t large_segments = 0;
  Bytes reserved;             // sum of total_size
  Bytes active_allocated;     // sizes of active_allocated blocks
  Bytes requested_allocated;  // requested_size of active_allocated blocks
  Bytes pending_free;         // sizes of active_pending_free blocks
  Bytes inactive;             // sizes of inactive blocks
  Bytes largest_inactive;     // the largest single inactive block
};

// Totals over every segment, or only those of `device`.
SegmentTotals SummarizeSegments(const std::vector<SnapshotSegment>& segments,
                                std::optional<DeviceId> device = std::nullopt);

// Devices that own a segment or have a non-empty trace, ascending.
std::vector<DeviceId> DevicesWithData(const Snapshot& snap);

// Trace entries per action name over all devices ("alloc", ..., and the
// names of unknown actions such as "annotate").
std::map<std::string, uint64_t> CountTraceActions(const Snapshot& snap);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_SNAPSHOT_SUMMARY_H_
