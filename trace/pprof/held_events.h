// A held state (trace/core/held_state.h) as events, so that every command
// can run on it: each device's buffers as `alloc` events tagged
// `preexisting` (memory held when the recording began), in the order the
// file lists them, a group of N buffers of B bytes as N allocs of B / N (the
// first B mod N one byte larger, so the bytes add up exactly). Attributes
// keep what the file said: `kind=buffer frame=train.py:42` (the innermost
// frame outside JAX's own Python and the standard library).
//
// What is not an event: executables (a profile gives no device for them,
// and on TPU no size), and any entry with negative bytes. A profile records
// no addresses, so the allocs carry no `addr=`; whatever policy replays them
// decides where they go.
#ifndef HBMSIM_TRACE_PPROF_HELD_EVENTS_H_
#define HBMSIM_TRACE_PPROF_HELD_EVENTS_H_

#include <memory>
#include <optional>
#include <string>

#include "trace/core/held_state.h"
#include "trace/core/reader.h"

namespace hbmsim::trace::pprof {

// Whether an entry becomes events: a buffer of known size.
bool PlacedAsEvents(const HeldEntry& e);

// The events of `device` (nullopt: every device, ascending). `held` and
// `metadata` must outlive the reader; `source` names it in Location().
std::unique_ptr<EventReader> MakeHeldEventReader(const HeldState& held, const TraceMetadata& metadata,
                                                 std::optional<DeviceId> device, std::string source);

// The innermost frame of `frames` that is the user's own Python (outside
// site-packages' jax/jaxlib, the standard library), "train.py:42"; else the
// innermost frame; "" for an empty stack.
std::string UserFrameKey(const ContextTable& table, uint32_t frames);

}  // namespace hbmsim::trace::pprof

#endif  // HBMSIM_TRACE_PPROF_HELD_EVENTS_H_
