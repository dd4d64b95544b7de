// PyTorch's DeviceStats (c10/core/CachingDeviceAllocator.h) and the flattened,
// sorted key list torch.cuda.memory_stats() returns (reference doc §1.12).
#ifndef HBMSIM_ALLOCATOR_TORCH_TORCH_STATS_H_
#define HBMSIM_ALLOCATOR_TORCH_TORCH_STATS_H_

#include <array>
#include <cstdint>

#include "allocator/core/stats.h"

namespace hbmsim::allocator::torch {

// current/peak plus the running sums of increases (allocated) and decreases (freed).
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void Increase(int64_t amount) {
    current += amount;
    peak = current > peak ? current : peak;
    allocated += amount;
  }
  void Decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  bool operator==(const Stat&) const = default;
};

// [0] all, [1] small_pool, [2] large_pool; a change hits `all` and the block's pool.
struct StatArray {
  std::array<Stat, 3> by_type;

  void Increase(bool small, int64_t amount) {
    by_type[0].Increase(amount);
    by_type[small ? 1 : 2].Increase(amount);
  }
  void Decrease(bool small, int64_t amount) {
    by_type[0].Decrease(amount);
    by_type[small ? 1 : 2].Decrease(amount);
  }
  const Stat& all() const { return by_type[0]; }
  const Stat& small_pool() const { return by_type[1]; }
  const Stat& large_pool() const { return by_type[2]; }
  bool operator==(const StatArray&) const = default;
};

struct TorchStats {
  StatArray allocation;            // count of allocated blocks (pending frees excluded)
  StatArray segment;               // cudaMalloc'd segments (expandable mappings excluded)
  StatArray active;                // allocated + pending-free blocks
  StatArray inactive_split;        // free blocks of split, non-expandable segments
  StatArray allocated_bytes;       // block sizes of allocated blocks
  StatArray reserved_bytes;        // cudaMalloc'd + mapped bytes
  StatArray active_bytes;          // block sizes of active blocks
  StatArray inactive_split_bytes;  // "non-releasable memory"
  StatArray requested_bytes;       // callers' sizes of active blocks
  Stat oversize_allocations;       // allocations with block size >= max_split_size
  Stat oversize_segments;          // segments with size >= max_split_size
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  int64_t max_split_size = -1;  // the config value; -1 = unlimited

  bool operator==(const TorchStats&) const = default;
  // torch.cuda.reset_peak_memory_stats(): every peak becomes its current value.
  void ResetPeaks() {
    for (StatArray* a : {&allocation, &segment, &active, &inactive_split, &allocated_bytes, &reserved_bytes,
                         &active_bytes, &inactive_split_bytes, &requested_bytes}) {
      for (Stat& s : a->by_type) s.peak = s.current;
    }
    oversize_allocations.peak = oversize_allocations.current;
    oversize_segments.peak = oversize_segments.current;
  }
};

// Appends memory_stats()'s keys in its (sorted) order, e.g.
// `active.all.allocated`, ..., `requested_bytes.small_pool.peak`.
void AppendTorchCounters(const TorchStats& s, Counters& out);

}  // namespace hbmsim::allocator::torch

#endif  // HBMSIM_ALLOCATOR_TORCH_TORCH_STATS_H_
