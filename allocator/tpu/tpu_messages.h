// The texts the TPU runtime prints, as pure functions: numbers in, string out.
// The policy never formats; reports call these with the numbers it returns.
//
//   E0100 [doc] openxla.org/xla/errors/error_0100:
//     RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate
//     8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)
//   E0101 [doc] openxla.org/xla/errors/error_0101:
//     RESOURCE_EXHAUSTED: Error loading program '<pid>': Attempting to reserve X
//     at the bottom of memory. That was not possible. There are F free,
//     R reserved, and V reservable.
//   The allocation dump of `tpu_log_allocations_on_oom` has no public format;
//   FormatAllocationDump is hbmsim's own.
#ifndef HBMSIM_ALLOCATOR_TPU_TPU_MESSAGES_H_
#define HBMSIM_ALLOCATOR_TPU_TPU_MESSAGES_H_

#include <string>
#include <string_view>

#include "allocator/core/units.h"
#include "allocator/tpu/tpu_snapshot.h"

namespace hbmsim::allocator {

// The memory-space tag of Google's sample message (device 0's HBM).
inline constexpr std::string_view kDefaultHbmSpace = "0x0x1_HBM0";

// `<n>B` under 1 KiB, else two decimals with K, M, G or T (base 1024):
// 1536 -> "1.50K", 8388608 -> "8.00M". Values past 1024 T stay in T.
std::string FormatTpuSize(Bytes b);

std::string FormatBufferAllocationError(Bytes rounded, Bytes free_bytes,
                                        std::string_view memory_space = kDefaultHbmSpace);

std::string FormatProgramLoadError(std::string_view program, Bytes reserve, Bytes free_bytes, Bytes reserved,
                                   Bytes reservable);

// Every live buffer of the snapshot (largest first), then the resident programs.
std::string FormatAllocationDump(const TpuOomSnapshot& snapshot);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_TPU_TPU_MESSAGES_H_
