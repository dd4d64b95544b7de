// A snapshot's own segments (the state when it was dumped) for one device, as
// the RecordedState a Recording hands out (trace/core/recorded_state.h): every
// generation and form, the bare list of torch.cuda.memory_snapshot()
// included, with or without a trace.
#ifndef HBMSIM_TRACE_TORCH_FINAL_STATE_H_
#define HBMSIM_TRACE_TORCH_FINAL_STATE_H_

#include <optional>

#include "trace/core/recorded_state.h"

namespace hbmsim::trace {

struct Snapshot;  // snapshot.h's BlockState collides with the allocator's (see snapshot_events.h)

// Each device's segments; For(device) is `device`'s, else the first device
// holding a segment's, else the first with a trace's, else device 0's (an
// empty allocator is a state too).
RecordedStates SnapshotFinalStates(const Snapshot& snap);

// True when no device has a trace entry: nothing to replay, only the state
// (`_dump_snapshot()` without `_record_memory_history`, the bare list). A gen1
// file whose trace is one `snapshot` entry still replays: its start state is
// seeded and its history addresses compared (--check-recorded).
bool SnapshotIsStateOnly(const Snapshot& snap);

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_TORCH_FINAL_STATE_H_
