// From a decoded pprof Profile (profile.h) to what it says is held
// (held_state.h): sample types found by name, string indices, location and
// function ids resolved, labels read, devices numbered. Every dangling index
// or id is an error naming the byte offset of the message that holds it.
#ifndef HBMSIM_TRACE_PPROF_RESOLVE_H_
#define HBMSIM_TRACE_PPROF_RESOLVE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/core/held_state.h"
#include "trace/pprof/profile.h"

namespace hbmsim::trace::pprof {

// The number a device label carries: 3 for "cuda:3", "gpu:3", "TPU_3(process=0,(1,0,0,1))",
// "TFRT_CPU_3"; nullopt when it has none.
std::optional<uint64_t> DeviceLabelNumber(std::string_view label);

// Errors: InvalidArgument "byte offset N: WHAT" (offsets into the decoded bytes).
absl::StatusOr<HeldState> ResolveDeviceProfile(const Profile& p);

}  // namespace hbmsim::trace::pprof

#endif  // HBMSIM_TRACE_PPROF_RESOLVE_H_
