// A policy-neutral view of device memory: regions, and the blocks tiling them.
//
//   region 0                          region 1
//   ┌─────────┬──────┬─────────────┐  ┌───────────────────┐
//   │ in use  │ free │   in use    │  │       free        │
//   └─────────┴──────┴─────────────┘  └───────────────────┘
//   base0                    base0+size0  base1
//
// Reports (dumps, address-space maps, memory_viz export) and the shared
// invariant checker read memory only through this walk.
#ifndef HBMSIM_ALLOCATOR_CORE_MEMORY_MAP_H_
#define HBMSIM_ALLOCATOR_CORE_MEMORY_MAP_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "allocator/core/block_state.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

struct RegionInfo {
  Offset base;
  Bytes size;
  uint64_t index = 0;  // the region's position in address order
  // A range whose pages are mapped on demand (PyTorch's expandable segments):
  // its kUnmapped blocks hold no memory, and each run of mapped blocks is
  // what PyTorch reports as one segment.
  bool expandable = false;
  bool small_pool = false;  // a caching allocator's pool of small blocks
  // The stream the region serves, when it is not the stream of its first
  // block: a pool every stream shares (CUDA's stream-ordered pool) says 0.
  std::optional<uint64_t> stream{};
};

inline constexpr uint64_t kNoHandle = ~uint64_t{0};

struct BlockInfo {
  Offset offset;
  Bytes size;
  Bytes requested;  // the caller's bytes (stale for free blocks in BFC, as in TF)
  BlockState state = BlockState::kFree;
  uint64_t handle = kNoHandle;       // the policy's block handle, if it has one
  uint64_t next_handle = kNoHandle;  // the next block's handle in the region (TF dumps print it)
  uint64_t id = 0;                   // buffer or program id for in-use blocks
  uint64_t stream = 0;
};

class MemoryMapVisitor {
 public:
  virtual ~MemoryMapVisitor() = default;
  virtual void OnRegion(const RegionInfo& r) = 0;
  // Blocks of the region last announced, in address order.
  virtual void OnBlock(const BlockInfo& b) = 0;
};

class Allocator;

// The shared oracle: blocks tile each region exactly (no gap, no overlap,
// regions disjoint and in increasing address order), the bytes of held
// blocks (in use, pending free) equal stats.bytes_in_use, and the bytes of
// program blocks equal stats.bytes_reserved.
absl::Status CheckMemoryMapTiling(const Allocator& a);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_MEMORY_MAP_H_
