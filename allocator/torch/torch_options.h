// Options of the `torch` policy under PYTORCH_CUDA_ALLOC_CONF's own names, the
// size rules that depend on them (round_size, get_allocation_size), and a pure
// parser for the `key:value,key:value` configuration string.
//
// Constants and rules copy c10/cuda/CUDACachingAllocator.cpp and
// c10/core/AllocatorConfig.cpp (reference doc §1.1–§1.3, §1.7).
#ifndef HBMSIM_ALLOCATOR_TORCH_TORCH_OPTIONS_H_
#define HBMSIM_ALLOCATOR_TORCH_TORCH_OPTIONS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator::torch {

inline constexpr uint64_t kMinBlockSize = 512;           // every request rounds to a multiple
inline constexpr uint64_t kSmallSize = 1ull << 20;       // rounded <= 1 MiB: small pool
inline constexpr uint64_t kSmallBuffer = 2ull << 20;     // small-pool segment size
inline constexpr uint64_t kMinLargeAlloc = 10ull << 20;  // >= 10 MiB: segment = rounded request
inline constexpr uint64_t kRoundLarge = 2ull << 20;      // ... rounded up to 2 MiB
inline constexpr uint64_t kLargeBuffer = 20ull << 20;    // default large_segment_size
inline constexpr int kRoundupIntervals = 16;             // roundup_power2_divisions buckets
inline constexpr uint64_t kUnlimited = ~uint64_t{0};     // max_split_size default (SIZE_MAX)

struct TorchOptions {
  // Blocks >= this are never split; unlimited by default (the snapshot's -1).
  Bytes max_split_size{kUnlimited};
  // An oversize request may take a cached block only if block < request + this.
  Bytes max_non_split_rounding{kLargeBuffer};
  // Bucket i covers [2^i MiB, 2^(i+1) MiB); bucket 0 also holds everything below
  // 2 MiB, bucket 15 everything from 32 GiB. 0 or 1 = plain 512 B rounding.
  std::array<uint64_t, kRoundupIntervals> roundup_power2_divisions{};
  // In (0, 1); 0 = off. Acts only when per_process_memory_fraction is set.
  double garbage_collection_threshold = 0.0;
  bool expandable_segments = false;
  // Segment size for 1–10 MiB requests and the large-pool page of expandable segments.
  Bytes large_segment_size{kLargeBuffer};
  // set_per_process_memory_fraction: allowed = floor(fraction × capacity), checked
  // before cudaMalloc. Unset = no limit besides capacity.
  std::optional<double> per_process_memory_fraction;
  // The device's memory: cudaMalloc fails when reserved + alloc_size > capacity.
  Bytes capacity = Bytes::Max();
  // Expandable segments reserve ceil(1.125 × capacity / page) pages of address
  // space; with an unlimited capacity this many bytes are assumed instead.
  Bytes expandable_va_capacity = Bytes::GiB(80);
  // The device index printed in the OOM message ("GPU 0 has ...").
  int device_index = 0;
  // false (faithful): after release_cached_blocks the ladder only retries
  // cudaMalloc, as PyTorch does (issue 189504). true (fixed, PR 191302): the
  // pool is searched again first.
  bool fixed_retry_search = false;

  bool operator==(const TorchOptions&) const = default;
};

// What one configuration string sets; keys it does not mention stay unset.
struct TorchConfDelta {
  std::optional<Bytes> max_split_size;
  std::optional<Bytes> max_non_split_rounding;
  std::optional<std::array<uint64_t, kRoundupIntervals>> roundup_power2_divisions;
  std::optional<double> garbage_collection_threshold;
  std::optional<bool> expandable_segments;
  std::optional<Bytes> large_segment_size;
  std::optional<double> per_process_memory_fraction;
};

// Parses `key:value,key:value` (whitespace ignored, lists as `[a:b,c:d]`) with
// PyTorch's error texts. Pure: no environment, no files. Accepted and ignored
// (host-side or performance-only): release_lock_on_cudamalloc,
// pinned_use_cuda_host_register, pinned_num_register_threads,
// pinned_use_background_threads, pinned_reserve_segment_size_mb,
// graph_capture_record_stream_reuse, throw_on_cudamalloc_oom. backend must be
// `native` (cudaMallocAsync is a different allocator).
absl::StatusOr<TorchConfDelta> ParseAllocConf(std::string_view conf);

// Overwrites the options the delta sets.
void ApplyConfDelta(const TorchConfDelta& delta, TorchOptions& options);

// The bucket of roundup_power2_divisions that `size` falls in.
int RoundupBucket(uint64_t size);
// round_size(size): 512 B minimum and multiple, or the next power-of-two division.
Bytes RoundSize(Bytes size, const TorchOptions& options);
// get_allocation_size(rounded): the size of the segment a cache miss creates.
Bytes AllocationSize(Bytes rounded, const TorchOptions& options);
// True when the rounded size is served by the small pool.
inline bool IsSmallSize(Bytes rounded) { return rounded.value() <= kSmallSize; }

}  // namespace hbmsim::allocator::torch

#endif  // HBMSIM_ALLOCATOR_TORCH_TORCH_OPTIONS_H_
