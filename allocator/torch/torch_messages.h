// Pure formatting of PyTorch's user-facing texts from numbers: the current
// OutOfMemoryError message (reference doc §2, word for word) and the
// torch.cuda.memory_summary() table (§1.12).
#ifndef HBMSIM_ALLOCATOR_TORCH_TORCH_MESSAGES_H_
#define HBMSIM_ALLOCATOR_TORCH_TORCH_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "allocator/core/units.h"
#include "allocator/torch/torch_stats.h"

namespace hbmsim::allocator::torch {

// What an OutOfMemoryError reports about the state at the failure.
struct OomNumbers {
  Bytes alloc_size;  // get_allocation_size(round_size(request)): "Tried to allocate"
  Bytes rounded;     // the oom trace entry's size
  int device = 0;
  Bytes total;                   // cudaMemGetInfo total = capacity
  Bytes free;                    // cudaMemGetInfo free = capacity − reserved
  std::optional<Bytes> allowed;  // allowed_memory_maximum, when a fraction is set
  Bytes allocated;               // allocated_bytes.all.current
  Bytes reserved;                // reserved_bytes.all.current
  Bytes private_pools;           // pp; always 0 here (no private pools modelled)
  bool operator==(const OomNumbers&) const = default;
};

// format_size: "1024 bytes", "1024.00 KiB", "1.50 MiB", "2.00 GiB" (inclusive bounds).
std::string FormatSize(uint64_t bytes);

// The current (≈2.4 → newest) message; {proc_info} is empty (no NVML here).
std::string FormatOutOfMemoryMessage(const OomNumbers& n);

// memory_summary(device, abbreviated): the 75-column table, every line `|...|`.
std::string FormatMemorySummary(const TorchStats& stats, int device, bool abbreviated = false);

}  // namespace hbmsim::allocator::torch

#endif  // HBMSIM_ALLOCATOR_TORCH_TORCH_MESSAGES_H_
