// A JAX device memory profile (jax.profiler.save_device_memory_profile, or
// device_memory_profile() written to a file) as a HeldState
// (trace/core/held_state.h): what the JAX runtime held live when it was
// taken. The file is a gzipped pprof Profile (profile.h) whose sample types
// are `allocations/count` and `space/bytes`; each sample is one (Python stack,
// kind, device) with its count and bytes:
//
//   label kind     "buffer" | "executable"
//   label device   "cuda:0", "gpu:0", "TPU_0(process=0,(0,0,0,0))", "TFRT_CPU_0",
//                  or (the oldest jaxlib) a numeric label; executables have none
//
// Devices are numbered by the label's own number (cuda:3 is device 3) when
// every label has one and no two share it, else in order of first appearance.
// Samples of one (stack, kind, device) are kept apart as written.
//
// Errors name the file and the byte offset, in the compressed file for a
// gzip stream that is cut or corrupt, else in the decompressed profile:
// "memory.prof: byte offset 812 of the decompressed profile: location 9 of
// the sample is not in the profile". The decompressed size is capped.
#ifndef HBMSIM_TRACE_PPROF_DEVICE_PROFILE_H_
#define HBMSIM_TRACE_PPROF_DEVICE_PROFILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "trace/core/held_state.h"

namespace hbmsim::trace::pprof {

// Larger decompressed profiles are refused (the largest public ones are a
// few hundred KiB).
inline constexpr size_t kMaxProfileBytes = size_t{256} << 20;
// More buffers than this in one profile are refused: a probe or replay places
// each one (a policy's block costs about a hundred bytes), and a sample of a
// few bytes can claim any count. The shared profiles hold at most 682.
inline constexpr uint64_t kMaxHeldBuffers = uint64_t{1} << 20;

// `bytes`: the file, gzipped or not. `source` names it in errors.
absl::StatusOr<HeldState> ParseDeviceProfile(std::string_view bytes, std::string_view source);
absl::StatusOr<HeldState> ReadDeviceProfileFile(const std::string& path);

// True when `path` is a gzip stream whose first decompressed bytes are a
// pprof Profile's first field (a sample_type), or is such a Profile itself.
bool LooksLikeDeviceProfile(const std::string& path);


}  // namespace hbmsim::trace::pprof

#endif  // HBMSIM_TRACE_PPROF_DEVICE_PROFILE_H_
