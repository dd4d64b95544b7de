// AllocatorStats under the names JAX's Device.memory_stats() and TSL's
// tsl::AllocatorStats use, so numbers can be compared with a real run 1:1.
#ifndef HBMSIM_ALLOCATOR_CORE_STATS_H_
#define HBMSIM_ALLOCATOR_CORE_STATS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/units.h"

namespace hbmsim::allocator {

// A stat with no bound: the limit of a device of unlimited size, the largest
// request such a device could serve, PyTorch's unset max_split_size. Reports
// print it as "unlimited" (text) or null (JSON), never as a number.
inline constexpr int64_t kUnlimitedStat = std::numeric_limits<int64_t>::max();

// Bytes as a stat value: the same number, or kUnlimitedStat from 2^63 up (an
// unlimited Bytes::Max() limit and what is left of it), never a negative wrap.
inline int64_t StatBytes(Bytes b) {
  return b.value() >= static_cast<uint64_t>(kUnlimitedStat) ? kUnlimitedStat
                                                            : static_cast<int64_t>(b.value());
}
inline bool IsUnlimitedStat(int64_t v) { return v == kUnlimitedStat; }

struct AllocatorStats {
  int64_t num_allocs = 0;    // successful allocations so far
  int64_t bytes_in_use = 0;  // bytes held by live buffers (block sizes, rounding included)
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;      // largest block ever handed out
  std::optional<int64_t> bytes_limit;  // unset or kUnlimitedStat: no limit
  int64_t bytes_reserved = 0;          // e.g. resident TPU programs; 0 for BFC
  int64_t peak_bytes_reserved = 0;
  std::optional<int64_t> bytes_reservable_limit;
  // The largest request that would succeed right now (recovery steps included);
  // kUnlimitedStat when no limit bounds it.
  int64_t largest_free_block_bytes = 0;
  std::optional<int64_t> pool_bytes;  // bytes the allocator holds from the device
  std::optional<int64_t> peak_pool_bytes;

  bool operator==(const AllocatorStats&) const = default;
  // Allocator::ClearStats() over these fields (TF's BFCAllocator::ClearStats).
  void Clear() {
    num_allocs = 0;
    peak_bytes_in_use = bytes_in_use;
    largest_alloc_size = 0;
  }
};

// A policy-specific counter beyond AllocatorStats (defragmentations, PyTorch's
// memory_stats() keys, ...). Policies append them in a fixed order, so reports
// are deterministic.
struct Counter {
  std::string name;
  int64_t value = 0;
  bool operator==(const Counter&) const = default;
};
using Counters = std::vector<Counter>;

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_STATS_H_
