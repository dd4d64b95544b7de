// A trivial policy that exists to prove a new policy needs only its two
// folders and one list line (issue 45, docs/contributing.md "Add a policy"): next fit
// over one region of the whole limit.
//
//   [0, limit) = in-use blocks ∪ free blocks, free neighbours coalesced;
//   a request (rounded up to 256 B) takes the first free block that fits,
//   searching from the end of the last placement and wrapping around once:
//
//     | used | free  | used |  free   |         cursor ──▶ search from here
//                             ▲ cursor
//
// It is no upstream allocator; placements are exact and deterministic.
#ifndef HBMSIM_TESTS_POLICIES_NEXT_FIT_ALLOCATOR_NEXT_FIT_ALLOCATOR_H_
#define HBMSIM_TESTS_POLICIES_NEXT_FIT_ALLOCATOR_NEXT_FIT_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "allocator/core/allocator.h"

namespace hbmsim::allocator {

struct NextFitOptions {
  Bytes memory_limit;
  Bytes alignment{256};
};

class NextFitAllocator final : public Allocator {
 public:
  explicit NextFitAllocator(const NextFitOptions& options);

  std::string_view name() const override { return "next_fit"; }
  AllocResult Allocate(const AllocRequest& req) override;
  void Free(Handle h) override;
  AllocatorStats GetStats() const override;
  void ClearStats() override { stats_.Clear(); }
  void WalkMemoryMap(MemoryMapVisitor& v) const override;
  absl::Status CheckInvariants() const override;

 private:
  struct Live {
    uint64_t size = 0;
    uint64_t requested = 0;
    uint64_t id = 0;
    uint64_t stream = 0;
  };
  std::optional<uint64_t> TakeNextFit(uint64_t size);
  void Release(uint64_t offset, uint64_t size);
  uint64_t LargestFree() const;
  uint64_t FreeBytes() const;

  NextFitOptions options_;
  uint64_t region_ = 0;
  uint64_t cursor_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> size, coalesced
  std::map<uint64_t, Live> live_;      // offset (the handle) -> block
  AllocatorStats stats_;
};

}  // namespace hbmsim::allocator

#endif  // HBMSIM_TESTS_POLICIES_NEXT_FIT_ALLOCATOR_NEXT_FIT_ALLOCATOR_H_
