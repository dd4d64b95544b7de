// The `paged` baseline: a pool whose physical memory is fungible in pages, as
// cuda_malloc_async's driver pool and PyTorch's expandable segments remap
// physical pages behind virtual addresses (tpu-and-xla.md
// §1.9: "a page-granular (e.g. 2 MiB) VA-remapping pool").
//
// Model
// -----
// The limit holds floor(min(limit, 32 PiB) / page) physical pages (32 PiB: half
// the virtual space below, which leaves virtual placement room to spare; a
// limit past it would fail 8 EiB requests on address space alone). A request takes
// ceil(bytes / page) whole pages, wherever they are: it fits exactly when that
// many pages are free, so the only waste is the tail of its last page (no
// external fragmentation; every failure is `oom`). Pages are mapped on demand
// and stay mapped when freed (the pool keeps them cached, as cuda_malloc_async
// does with its release threshold at the pool size): pool = mapped pages.
//
// So the memory map still means something, every block gets a range of a
// large virtual address space (kVirtualSpace bytes, first fit, eager
// coalescing); unbacked address space shows as `unmapped`, and the pages
// mapped but unused, which have no address of their own, as one free block
// at the top.
//
//   VA 0                                                     kVirtualSpace
//   ┌─────────┬────────┬──────────┬─────────────────────────┬───────────┐
//   │ in use  │unmapped│  in use  │        unmapped         │mapped free│
//   └─────────┴────────┴──────────┴─────────────────────────┴───────────┘
//   physical: [used pages][mapped, free pages][unmapped pages up to limit]
//
// Invariants (CheckInvariants):
//   blocks tile the VA region (shared oracle);
//   used pages · page == bytes_in_use == Σ live block sizes;
//   used pages <= mapped pages <= floor(limit / page).
#ifndef HBMSIM_ALLOCATOR_BASELINES_PAGED_ALLOCATOR_H_
#define HBMSIM_ALLOCATOR_BASELINES_PAGED_ALLOCATOR_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "allocator/baselines/free_ranges.h"
#include "allocator/core/allocator.h"

namespace hbmsim::allocator {

struct PagedOptions {
  Bytes memory_limit;
  uint64_t page_size = uint64_t{2} << 20;  // > 0
};

class PagedAllocator final : public Allocator {
 public:
  static constexpr uint64_t kVirtualSpace = uint64_t{1} << 56;

  explicit PagedAllocator(const PagedOptions& options);

  std::string_view name() const override { return "paged"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  AllocatorStats GetStats() const override;
  void ClearStats() override { stats_.Clear(); }
  int64_t BytesInUse() const override { return stats_.bytes_in_use; }
  void AppendCounters(Counters& out) const override;  // pages_total, pages_mapped, pages_used
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  // The mapped pages (stats.pool_bytes): a freed page stays mapped.
  Bytes ReservedBytes() const override { return Bytes(pages_mapped_ * options_.page_size); }
  // GenericCause: rounding to whole pages, and the mapped pages no block uses
  // (cached_free, one free block at the top of the walk).
  std::span<const std::string_view> ReservedCauses() const override { return kInUseAndFreeCauses; }
  absl::Status CheckInvariants() const override;

 private:
  struct Block {
    uint64_t pages = 0;
    uint64_t requested = 0;
    uint64_t id = 0;
    uint64_t stream = 0;
  };

  AllocResult Fail(Bytes rounded) const;

  PagedOptions options_;
  uint64_t pages_total_;
  uint64_t pages_mapped_ = 0;
  uint64_t pages_used_ = 0;
  baselines::FreeRanges virtual_free_{false};
  // virtual address -> block; the handle is the address. Looked up only: the walk sorts.
  absl::flat_hash_map<uint64_t, Block> live_;
  AllocatorStats stats_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_ALLOCATOR_BASELINES_PAGED_ALLOCATOR_H_
