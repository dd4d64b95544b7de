// --probe SIZE on a held state (a JAX device memory profile): would one more
// request of SIZE fit on a device once its live buffers are placed?
//
// A held state records no addresses, so the answer rests on an assumption,
// stated with it: the device's buffers are placed through the chosen policy
// (the recording's own, or --allocator) from
// an empty allocator at the limit, in the order the file lists them, then
// the request is made. That is the tightest packing the policy reaches for
// these buffers; the job's real heap, shaped by everything freed in
// between, can only be as good or more fragmented, so "fits" here means
// "fits if the heap were compact" and "does not fit" is certain for an oom.
// The placement is the one pipeline every command runs: a ScenarioRun of the
// recording's events for that device.
#ifndef HBMSIM_SIM_INSPECT_HELD_PROBE_H_
#define HBMSIM_SIM_INSPECT_HELD_PROBE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "allocator/core/allocator.h"
#include "sim/config/allocator_config.h"
#include "sim/layer.h"
#include "trace/formats/recording.h"

namespace hbmsim::sim::inspect {

struct HeldProbe {
  Bytes requested;
  bool placed_all = true;  // false: the held buffers alone did not fit (no request was made)
  uint64_t placement_failures = 0;
  AllocResult result;   // of the request, when placed_all
  Bytes in_use_before;  // the policy's bytes in use once the buffers are placed
};

// The policy of `allocator` (a name or YAML; "" takes the recording's own)
// with the recording's settings, for `device`. Errors name --allocator.
absl::StatusOr<AllocatorConfig> HeldPolicy(std::shared_ptr<const Recording> recording, DeviceId device,
                                           const std::string& allocator);

// Places `device`'s buffers through `config` at `limit`, then asks for `size`.
absl::StatusOr<HeldProbe> ProbeHeld(std::shared_ptr<const Recording> recording, DeviceId device,
                                    const AllocatorConfig& config, Bytes limit, Bytes size);

}  // namespace hbmsim::sim::inspect

#endif  // HBMSIM_SIM_INSPECT_HELD_PROBE_H_
