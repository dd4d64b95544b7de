// Reserved, explained: every byte a policy holds from the device in exactly
// one part, so "why is reserved so much larger than allocated?" has an answer
// that adds up.
//
//   reserved = Σ region sizes − Σ unmapped blocks            (the walk's view)
//            = requested      Σ min(requested, size) of live blocks
//            + rounding       Σ size − requested of live blocks (the policy's
//                             name for it: "padding" on a TPU)
//            + Σ every other block (free, pending free, program) by the
//              cause the policy gives it (Allocator::CauseOf)
//
// Every byte of the walk lands in exactly one term (a block in one, or a
// free block of two causes split at its inner run), so the sum is exact by
// construction; tests check it against the policy's own counter
// (Allocator::ReservedBytes) on every shared recording.
//
// The policy names causes in its runtime's own terms: torch says
// inactive_split / free_segment / expandable_free (whole pages) and
// expandable_partial_page, BFC free_chunk by bin and
// region_tail, the TPU runtime padding / program_reservation / queued_free /
// gap. A report never asks which policy it has; it prints what CauseOf says.
#ifndef HBMSIM_ALLOCATOR_CORE_RESERVED_PARTS_H_
#define HBMSIM_ALLOCATOR_CORE_RESERVED_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/core/memory_map.h"
#include "allocator/core/units.h"

namespace hbmsim::allocator {

// Why a block takes reserved bytes: a cause ("inactive_split") and, within
// it, a subdivision ("large pool", "bin 12", "stream 7"; "" for none).
struct ReservedCause {
  std::string cause;
  std::string key;
  // A free block kept for two reasons: the bytes [inner_offset, inner_offset
  // + inner_size) take `inner_cause` (same key), the rest of the block
  // `cause`. PyTorch's expandable segments: the whole pages empty_cache()
  // would unmap, inside a block whose edge pages a live block shares.
  // Empty (size 0) for a block with one cause.
  std::string inner_cause{};
  Offset inner_offset{};
  Bytes inner_size{};
  bool operator==(const ReservedCause&) const = default;
};

// What CauseOf sees of one block: the block, its region, and two facts of the
// region a policy's rules turn on.
struct BlockContext {
  const RegionInfo& region;
  const BlockInfo& block;
  // Some block of the region is in use, pending free or a program: a free
  // block here cannot be returned to the device without the others.
  bool region_holds_live = false;
  bool last_in_region = false;  // nothing above it in the region
  const BlockInfo* below = nullptr;  // the neighbours in the region; null at its ends
  const BlockInfo* above = nullptr;
};

// The generic answer, for a policy with no terms of its own: rounding,
// pending_free, program, cached_free.
ReservedCause GenericCause(const BlockContext& c);
// The causes GenericCause can give, its rounding first
// (Allocator::ReservedCauses's default).
inline constexpr std::string_view kGenericCauses[] = {"rounding", "pending_free", "program", "cached_free"};
// Those of a policy whose blocks are only in use or free (the baselines).
inline constexpr std::string_view kInUseAndFreeCauses[] = {"rounding", "cached_free"};

// One part of reserved: the blocks of one (cause, key), their bytes. A block
// with an inner cause counts once in each of its two parts.
struct ReservedPart {
  std::string cause;
  std::string key;
  Bytes bytes;
  uint64_t blocks = 0;
};

// A free block held by the policy, with where it lies.
struct CachedBlock {
  Offset offset;
  Bytes size;
  std::string cause;
  std::string key;
  Offset region_base;
  uint64_t region_index = 0;
  // The bytes of the block that take another cause (ReservedCause's inner_*).
  std::string inner_cause{};
  Offset inner_offset{};
  Bytes inner_size{};
};

// A run of a free block's bytes that takes one cause: the whole block, or
// one of the up to three runs of a block with an inner cause.
struct FreePiece {
  Offset block;  // the free block's offset: pieces of one block share it
  Offset offset;
  Bytes size;
  std::string_view cause;
  std::string_view key;
};

struct ReservedWalk {
  Bytes reserved;
  Bytes in_use;     // Σ size of live blocks (requested + rounding)
  Bytes requested;  // Σ min(requested, size) of live blocks; split by the caller's labels
  // Every term but `requested`, by (cause, key): rounding first, then the
  // others largest first (ties by cause, key). requested + Σ parts = reserved.
  std::vector<ReservedPart> parts;
  std::vector<CachedBlock> largest_free;  // the largest free blocks, largest first (ties by offset)
};

class Allocator;

// Walks `a`'s memory map into a ReservedWalk, keeping the `largest_free`
// largest free blocks. `on_live` (may be null) sees each live block (in use,
// with its requested bytes) so the caller can split `requested` by its own
// labels (the user's frame, tag or op); `on_free` (may be null) sees every
// free block's runs, in address order, so it can split their parts by who
// freed them.
ReservedWalk WalkReserved(const Allocator& a, size_t largest_free,
                          const std::function<void(const BlockInfo&)>& on_live = nullptr,
                          const std::function<void(const FreePiece&)>& on_free = nullptr);

// Σ region sizes − Σ unmapped blocks: Allocator::ReservedBytes's default.
Bytes ReservedBytesByWalk(const Allocator& a);

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_CORE_RESERVED_PARTS_H_
